/**
 * The queue recipes, as pure functions over one consistent listing of a lock's keys in
 * create-revision order. Each kind decides from that listing whether its contender holds the
 * lock, or which key (or key range) it must watch, so that a release wakes the one waiter it
 * concerns rather than all of them.
 *
 * @module
 */
import type { LockKind } from '@lockkit/core';

/** One contender key of a queue. */
export interface QueueEntry {
  readonly key: string;
  readonly kind: LockKind;
  /** The key's create revision: its place in the queue and its holder's fencing token. */
  readonly createRevision: bigint;
}

/** What a contender does next. */
export type Decision =
  | { readonly action: 'granted'; readonly successors: number }
  /** Wait for the next change (deletion, or a semaphore holder's grant mark) of `key`. */
  | { readonly action: 'watch-key'; readonly key: string }
  /** Wait for any deletion in the lock's key range. */
  | { readonly action: 'watch-queue' }
  /** The contender's own key is not in the queue (deleted, or its lease ended). */
  | { readonly action: 'missing' };

/**
 * Decides for the contender whose key is `own`:
 * - mutex / writer: holds when first of all; otherwise watches its immediate predecessor.
 * - reader: holds when no writer is ahead (a waiting writer blocks later readers: writer
 *   preference); otherwise watches the nearest writer ahead.
 * - semaphore(n): holds when fewer than n keys are ahead (strict FIFO). The first waiter
 *   watches the whole queue for deletions (any holder leaving frees its permit). A later
 *   waiter watches its predecessor, which is deleted when it gives up or releases, and is
 *   marked when it is granted (then the later waiter may have become the first one). Watching
 *   the key n places ahead would not do: holders release in any order, so a permit can free
 *   up while that key stays.
 */
export function decide(
  kind: LockKind,
  maxCount: number,
  queue: readonly QueueEntry[],
  own: string,
): Decision {
  const index = queue.findIndex((entry) => entry.key === own);
  if (index < 0) return { action: 'missing' };
  const successors = queue.length - index - 1;
  switch (kind) {
    case 'mutex':
    case 'write':
      return index === 0
        ? { action: 'granted', successors }
        : { action: 'watch-key', key: queue[index - 1]!.key };
    case 'read': {
      for (let i = index - 1; i >= 0; i--) {
        if (queue[i]!.kind === 'write') return { action: 'watch-key', key: queue[i]!.key };
      }
      return { action: 'granted', successors };
    }
    case 'semaphore':
      if (index < maxCount) return { action: 'granted', successors };
      if (index === maxCount) return { action: 'watch-queue' };
      return { action: 'watch-key', key: queue[index - 1]!.key };
  }
}
