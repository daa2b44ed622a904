import type { LockKind } from './types.js';

/** One contender of a server-side queue, in queue order (a ZooKeeper node, an etcd key, …). */
export interface QueuedContender {
  readonly kind: LockKind;
  /** Semaphore permits it takes. @defaultValue 1 */
  readonly permits?: number | undefined;
}

/** What the contender at a queue position does next. */
export type QueueDecision =
  | { readonly action: 'granted'; readonly successors: number }
  /** Wait for the next change (deletion, or a semaphore holder's grant mark) of `queue[index]`. */
  | { readonly action: 'watch'; readonly index: number }
  /** Wait for any deletion in the queue. */
  | { readonly action: 'watch-all' };

/**
 * The queue recipe shared by the backends whose servers keep an ordered queue of contenders
 * (ZooKeeper sequential nodes, etcd create revisions), for the contender at `index`:
 * - mutex / writer: holds when first of all; otherwise watches its immediate predecessor.
 * - reader: holds when no writer is ahead (a waiting writer blocks later readers: writer
 *   preference); otherwise watches the nearest writer ahead.
 * - semaphore(n): holds when the permits of everyone ahead plus its own are at most n (strict
 *   FIFO: a waiter ahead keeps every later one waiting, so a big request is never overtaken by
 *   smaller ones). The first waiter watches the whole queue (any holder leaving frees its
 *   permit); a later waiter watches its predecessor, which is deleted when it gives up or
 *   releases and marked when it is granted, so each event wakes exactly one waiter. Watching
 *   the contender n places ahead would not do: holders release in any order.
 */
export function queueDecision(
  kind: LockKind,
  maxCount: number,
  queue: readonly QueuedContender[],
  index: number,
): QueueDecision {
  const successors = queue.length - index - 1;
  switch (kind) {
    case 'mutex':
    case 'write':
      return index === 0
        ? { action: 'granted', successors }
        : { action: 'watch', index: index - 1 };
    case 'read': {
      for (let i = index - 1; i >= 0; i--) {
        if (queue[i]!.kind === 'write') return { action: 'watch', index: i };
      }
      return { action: 'granted', successors };
    }
    case 'semaphore': {
      let ahead = 0;
      for (let i = 0; i < index; i++) ahead += queue[i]!.permits ?? 1;
      if (ahead + (queue[index]!.permits ?? 1) <= maxCount)
        return { action: 'granted', successors };
      // The first waiter (everyone ahead holds) watches the whole queue for deletions.
      if (index === 0 || ahead <= maxCount) return { action: 'watch-all' };
      return { action: 'watch', index: index - 1 };
    }
  }
}
