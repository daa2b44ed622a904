import { BackendUnavailableError } from 'lockkit';

/**
 * Where a connection string points: `host:port`, or the socket named by its `host` (pg) or
 * `socketPath` (mysql2) query parameter.
 */
export function addressOf(connection: string, defaultPort: number): string {
  try {
    const url = new URL(connection);
    const socket = url.searchParams.get('host') ?? url.searchParams.get('socketPath');
    if (socket?.startsWith('/')) return socket;
    return `${url.hostname || 'localhost'}:${url.port || defaultPort}`;
  } catch {
    return 'the server of the URL';
  }
}

/**
 * Runs one call of a server's client library; what it throws becomes a
 * `BackendUnavailableError` naming the server and address, with the client's error as cause.
 */
export async function askServer<T>(
  server: string,
  address: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new BackendUnavailableError(`${server} at ${address}: ${describe(error)}`, {
      cause: error,
    });
  }
}

/** The client's message; for an AggregateError (every address of a host refused), theirs. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map((inner: unknown) => describe(inner)).join('; ');
  }
  if (error instanceof Error) return error.message || String((error as { code?: unknown }).code);
  return String(error);
}
