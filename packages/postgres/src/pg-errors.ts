import { BackendUnavailableError } from '@lockkit/core';

/** SQLSTATE codes this package reacts to. */
export const sqlState = {
  /** lock_timeout expired. */
  lockNotAvailable: '55P03',
  /** statement cancelled (our cancel request, or a statement_timeout). */
  queryCanceled: '57014',
  /** The server's deadlock detector chose this statement. */
  deadlockDetected: '40P01',
  undefinedTable: '42P01',
  duplicateTable: '42P07',
  uniqueViolation: '23505',
} as const;

/**
 * Connection failures that stay until someone changes the setup (a `retryable: false`
 * BackendUnavailableError): invalid_authorization_specification, invalid_password,
 * invalid_catalog_name (no such database).
 */
export const setupStates: ReadonlySet<string> = new Set(['28000', '28P01', '3D000']);

/** The SQLSTATE of a server error, or undefined for client/transport errors. */
export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A short description of an error for messages. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `error` naming the server it could not reach: a {@link BackendUnavailableError} whose
 * message lacks `address` is rebuilt with it (same lock name and cause); others pass.
 */
export function withAddress(error: unknown, address: string): unknown {
  if (!BackendUnavailableError.isInstance(error) || error.message.includes(address)) return error;
  return new BackendUnavailableError(`${error.message} (PostgreSQL at ${address})`, {
    lockName: error.lockName,
    cause: error.cause ?? error,
    retryable: error.retryable,
  });
}
