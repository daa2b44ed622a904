import { deadlineGraceMs, delay, now, type WaitContext } from '@lockkit/core/backend';
import type { LockConnection } from './lock-connection.js';
import type { LockConnections } from './lock-connections.js';

/** "Forever" for `GET_LOCK` (MariaDB returns NULL for a negative timeout): one year, re-armed. */
export const FOREVER_SECONDS = 31_536_000;

/** Seconds (ms precision, fractional) until `deadline`, for `GET_LOCK`/`SLEEP`; never < 0. */
export function secondsUntil(deadline: number, capMs: number = Number.POSITIVE_INFINITY): number {
  if (deadline === Number.POSITIVE_INFINITY && capMs === Number.POSITIVE_INFINITY) {
    return FOREVER_SECONDS;
  }
  const ms = Math.min(capMs, Math.max(0, Math.ceil(deadline - now())));
  return Math.min(ms / 1000, FOREVER_SECONDS);
}

/** How a blocking statement ended. */
export type Outcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown };

/** The first pause before a `KILL QUERY` is sent again (doubling up to {@link killRetryMaxMs}). */
const killRetryMs = 5;
const killRetryMaxMs = 200;

/**
 * Runs one blocking statement on a waiting session; when `wait.signal` aborts while it runs,
 * ends it with `KILL QUERY` from a shared session (mysql2 has no query cancel). Resolves only
 * once any `KILL` has landed, so it can never hit the session's next statement.
 *
 * A `KILL QUERY` can miss: it ends whatever the session runs when it arrives, so one that
 * reaches the server before the statement started (or while a statement queued ahead of it
 * runs, such as a keepalive) leaves the statement to block on. So while the statement has
 * not ended, the `KILL` is sent again, after 5 ms, then 10, 20, … up to 200 ms apart.
 */
export async function blockingStatement<T>(
  connections: LockConnections,
  connection: LockConnection,
  wait: WaitContext,
  statement: () => Promise<T>,
): Promise<Outcome<T>> {
  let settled = false;
  // Cuts the pause between two KILLs short. Made only when a KILL is sent: an abort() without
  // a reason builds a DOMException, which cost ~170 µs of every hand-off.
  let ended: AbortController | undefined;
  let kill: Promise<void> | undefined;
  let grace: NodeJS.Timeout | undefined;
  const killUntilEnded = async (): Promise<void> => {
    ended = new AbortController();
    for (let pauseMs = killRetryMs; ; pauseMs = Math.min(2 * pauseMs, killRetryMaxMs)) {
      await connections.killQuery(connection.id).catch(() => undefined);
      await delay(pauseMs, ended.signal, true).catch(() => undefined);
      if (settled || connection.lost) return;
    }
  };
  const send = (): void => {
    if (!settled) kill ??= killUntilEnded();
  };
  const onAbort = (): void => {
    const graceMs = deadlineGraceMs(wait.deadline); // the server's own timeout may end it
    if (graceMs > 0) {
      grace = setTimeout(send, graceMs);
      grace.unref();
    } else send();
  };
  wait.signal.addEventListener('abort', onAbort, { once: true });
  let outcome: Outcome<T>;
  try {
    outcome = { ok: true, value: await statement() };
  } catch (error) {
    outcome = { ok: false, error };
  } finally {
    settled = true;
    ended?.abort();
    clearTimeout(grace);
    wait.signal.removeEventListener('abort', onAbort);
  }
  if (kill) await kill;
  return outcome;
}
