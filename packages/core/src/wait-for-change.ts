import type { ReleaseWatch } from './backend.js';
import { delay, jitter } from './timing.js';

/**
 * Waits for a release notification or the jittered safety poll, whichever comes first; rejects
 * with `signal.reason` when `signal` aborts. The poll timer keeps the process alive (the
 * caller awaits this wait). When the notification wins, the poll is cleared and nothing is
 * aborted: the watch took its waiter back when it notified, and an abort (an event dispatch)
 * cost more than the rest of a handoff's client-side work here. Only a poll that wins aborts
 * the pending `next()`, so a later notification stays latched for the next wait.
 */
export async function waitForChange(
  watch: ReleaseWatch | undefined,
  pollMs: number,
  signal: AbortSignal,
): Promise<void> {
  if (signal.aborted) throw signal.reason;
  if (!watch) return delay(jitter(pollMs), signal, true);
  const local = new AbortController();
  const onAbort = (): void => local.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const poll = new Promise<typeof polled>((resolve) => {
    timer = setTimeout(resolve, jitter(pollMs), polled);
  });
  try {
    if ((await Promise.race([watch.next(local.signal), poll])) === polled) local.abort(null);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

const polled = Symbol('polled');
