import { delay, jitter, Wakeup } from '@lockkit/core/backend';
import type { Etcd3 } from 'etcd3';
import { type KeyWatch, type WatchTarget, watchFrom } from './key-watch.js';
import type { LeaseSession } from './lease-session.js';
import type { Decision } from './lock-queue.js';

function targetOf(decision: Decision, prefix: string): WatchTarget | undefined {
  if (decision.action === 'watch-key') return { key: decision.key, deletesOnly: false };
  if (decision.action === 'watch-queue') return { prefix, deletesOnly: true };
  return undefined;
}

function sameTarget(left: WatchTarget | undefined, right: WatchTarget | undefined): boolean {
  if (!left || !right) return left === right;
  return 'key' in left ? 'key' in right && left.key === right.key : !('key' in right);
}

/**
 * A contender's wait in its queue: one watch on what the latest listing said to wait for (the
 * key just ahead, the nearest writer ahead, or for a semaphore's first waiter the whole
 * queue), kept while the listings keep naming the same target, plus the session's loss.
 * Notifications are latched, so one that comes between two waits is not lost.
 */
export class QueueWait {
  readonly #client: Etcd3;
  readonly #prefix: string;
  readonly #pollIntervalMs: number;
  readonly #wake = new Wakeup();
  readonly #stopSession: () => void;
  #target: WatchTarget | undefined;
  #watch: KeyWatch | undefined;

  constructor(client: Etcd3, session: LeaseSession, prefix: string, pollIntervalMs: number) {
    this.#client = client;
    this.#prefix = prefix;
    this.#pollIntervalMs = pollIntervalMs;
    this.#stopSession = session.onLost(() => this.#wake.notify());
  }

  /**
   * Watches what `decision` names. The watch starts at the present; if the store moved on
   * since the listing the decision came from (`listedAt`), the next wait ends at once, so
   * nothing since that listing is missed. A target that stays the same keeps its watch.
   */
  follow(decision: Decision, listedAt: bigint): void {
    const target = targetOf(decision, this.#prefix);
    if (this.#watch && sameTarget(target, this.#target)) return;
    this.#watch?.close();
    this.#target = target;
    const watch =
      target &&
      watchFrom(this.#client, target, { since: listedAt }, (event) => {
        // A watch the server cancelled is replaced at the next listing.
        if (event === 'failed' && this.#watch === watch) this.unfollow();
        this.#wake.notify();
      });
    this.#watch = watch;
  }

  /** Drops the watch (after a listing failed: look again after the poll interval only). */
  unfollow(): void {
    this.#watch?.close();
    this.#watch = undefined;
    this.#target = undefined;
  }

  /**
   * Waits for a notification, the (jittered) poll interval, or `signal`. Resolves in every
   * case; the caller lists the queue again.
   */
  async next(signal: AbortSignal): Promise<void> {
    const poll = new AbortController();
    const onAbort = (): void => poll.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([
        this.#wake.next(poll.signal),
        delay(jitter(this.#pollIntervalMs), poll.signal, true),
      ]).catch(() => undefined);
    } finally {
      poll.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.unfollow();
    this.#stopSession();
  }
}
