import { type RedisReply, RedisReplyError, sendRedisCommands } from './redis-protocol.js';
import type { ServerHandle } from './server-handle.js';

const commandTimeoutMs = 5_000;

/** Sends one command to a server on a fresh connection; an error reply is thrown. */
export async function redisCommand(
  server: { readonly host: string; readonly port: number },
  ...command: readonly string[]
): Promise<RedisReply> {
  const [reply] = await sendRedisCommands(server.host, server.port, [command], commandTimeoutMs);
  if (reply instanceof RedisReplyError) throw reply;
  return reply ?? null;
}

/** The `field:value` lines of an INFO section, as a map. */
export async function redisInfo(
  server: ServerHandle,
  section: string,
): Promise<Map<string, string>> {
  const text = String(await redisCommand(server, 'INFO', section));
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/**
 * Polls `check` (every 50 ms) until it returns a value other than `undefined`; rejects with
 * `what` and the last probe error when `timeoutMs` runs out. For topology changes a server
 * announces only in its state (a promotion, a cluster that became `ok`).
 */
export async function pollUntil<Value>(
  check: () => Promise<Value | undefined>,
  timeoutMs: number,
  what: string,
): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last probe: ${lastError.message})` : '';
      throw new Error(`${what} did not happen within ${timeoutMs} ms${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Stops every handle (in parallel), then throws the first failure if any. */
export async function stopAllServers(servers: readonly ServerHandle[]): Promise<void> {
  const results = await Promise.allSettled(servers.map((server) => server.stop()));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
}
