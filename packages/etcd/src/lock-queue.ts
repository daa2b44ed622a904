/**
 * The queue recipes, as pure functions over one consistent listing of a lock's keys in
 * create-revision order. Each kind decides from that listing whether its contender holds the
 * lock, or which key (or key range) it must watch, so that a release wakes the one waiter it
 * concerns rather than all of them.
 *
 * @module
 */
import type { LockKind } from '@lockkit/core';
import { queueDecision } from '@lockkit/core/backend';

/** One contender key of a queue. */
export interface QueueEntry {
  readonly key: string;
  readonly kind: LockKind;
  /** Semaphore permits the contender takes (`permitsOfKey`). @defaultValue 1 */
  readonly permits?: number | undefined;
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

/** Decides for the contender whose key is `own` (core's queue recipe, {@link queueDecision}). */
export function decide(
  kind: LockKind,
  maxCount: number,
  queue: readonly QueueEntry[],
  own: string,
): Decision {
  const index = queue.findIndex((entry) => entry.key === own);
  if (index < 0) return { action: 'missing' };
  const next = queueDecision(kind, maxCount, queue, index);
  if (next.action === 'watch') return { action: 'watch-key', key: queue[next.index]!.key };
  if (next.action === 'watch-all') return { action: 'watch-queue' };
  return next;
}
