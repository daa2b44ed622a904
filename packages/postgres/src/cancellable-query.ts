import { deadlineGraceMs, delay, now } from '@lockkit/core/backend';
import type pg from 'pg';
import { sendCancelRequest } from './cancel-request.js';

/** How a query ended. */
export type QueryOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown };

/** A cancel request is repeated this often (ms) until the query ends … */
const cancelRetryMs = 100;

/**
 * Awaits `query` (running on `client`); if `signal` aborts first, sends protocol cancel
 * requests until it ends (a request that arrives before the server started the statement is
 * ignored by the server, hence the repeats). If that does not end it within `cancelBudgetMs` (a frozen or
 * unreachable server), `giveUp` must end the query (by destroying the session). Resolves only
 * after every cancel request was delivered, so none of them can hit the next statement on the
 * session. `deadline` (performance.now() ms): when `signal` aborts at it, the query is the
 * server's to end first (its `lock_timeout` runs out then), for a short grace.
 */
export async function cancellableQuery<T>(
  client: pg.ClientBase,
  query: Promise<T>,
  signal: AbortSignal | undefined,
  giveUp: () => void,
  cancelBudgetMs = 5000,
  deadline: number = Number.POSITIVE_INFINITY,
): Promise<QueryOutcome<T>> {
  const ended: Promise<QueryOutcome<T>> = query.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
  let cancelling: Promise<void> | undefined;
  const onAbort = (): void => {
    const grace = deadlineGraceMs(deadline);
    cancelling = cancelUntilEnded(client, ended, giveUp, cancelBudgetMs, grace);
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const outcome = await ended;
  signal?.removeEventListener('abort', onAbort);
  await cancelling;
  return outcome;
}

async function cancelUntilEnded(
  client: pg.ClientBase,
  ended: Promise<unknown>,
  giveUp: () => void,
  cancelBudgetMs: number,
  graceMs: number,
): Promise<void> {
  let done = false;
  void ended.then(() => {
    done = true;
  });
  if (graceMs > 0) {
    const local = new AbortController();
    await Promise.race([ended, delay(graceMs, local.signal).catch(noop)]);
    local.abort();
  }
  const deadline = now() + cancelBudgetMs;
  while (!done && now() < deadline) {
    const delivered = await sendCancelRequest(client, Math.min(1000, deadline - now()));
    if (!delivered || done) break;
    const local = new AbortController();
    await Promise.race([ended, delay(cancelRetryMs, local.signal).catch(noop)]);
    local.abort();
  }
  if (!done) {
    giveUp();
    await ended;
  }
}

function noop(): void {}
