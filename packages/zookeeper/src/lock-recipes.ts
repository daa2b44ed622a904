/**
 * The Curator-style queue recipes, as pure functions over a parent's children. Every
 * contender creates an ephemeral-sequential child; the server's sequence number is its place
 * in one FIFO queue, and each kind decides from that queue whether it holds the lock or
 * which single node it must watch (so a release wakes one waiter, not all of them).
 *
 * @module
 */
import type { LockKind } from '@lockkit/core';

/** Node name prefix of each kind; the RW lock's two modes share one parent. */
export const nodePrefixes: Readonly<Record<LockKind, string>> = {
  mutex: 'lock-',
  read: 'read-',
  write: 'write-',
  semaphore: 'lease-',
};

/** Data a semaphore holder writes into its node when waiters may be watching it. */
export const ACQUIRED_MARKER: Buffer = Buffer.from('ACQUIRED');

/** A parsed child: `<prefix><uuid>-<sequence>`. */
export interface QueueNode {
  readonly name: string;
  readonly kind: LockKind;
  readonly id: string;
  /** The server's sequence number, read as unsigned 32-bit so a wrapped counter still sorts. */
  readonly sequence: number;
}

const nodePattern =
  /^(lock|read|write|lease)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(-?\d{10,11})$/;

const kindOfPrefix: Readonly<Record<string, LockKind>> = {
  lock: 'mutex',
  read: 'read',
  write: 'write',
  lease: 'semaphore',
};

/** Parses a child name; foreign nodes give undefined and are ignored. */
export function parseNode(name: string): QueueNode | undefined {
  const match = nodePattern.exec(name);
  if (!match) return undefined;
  const kind = kindOfPrefix[match[1]!]!;
  return { name, kind, id: match[2]!, sequence: Number(match[3]) >>> 0 };
}

/** The parent's children that are queue nodes, in queue (sequence) order. */
export function queueOf(children: readonly string[]): QueueNode[] {
  const queue: QueueNode[] = [];
  for (const child of children) {
    const node = parseNode(child);
    if (node) queue.push(node);
  }
  return queue.sort((a, b) => a.sequence - b.sequence);
}

/** What a contender does next. */
export type Decision =
  | { readonly action: 'granted'; readonly successors: number }
  | { readonly action: 'watch-node'; readonly node: string }
  | { readonly action: 'watch-children' }
  | { readonly action: 'missing' };

/**
 * Decides for the contender whose node is `own`:
 * - mutex / writer: holds when first of all; otherwise watches its immediate predecessor.
 * - reader: holds when no writer is ahead (a waiting writer blocks later readers: writer
 *   preference); otherwise watches the nearest writer ahead.
 * - semaphore: holds when fewer than `maxCount` nodes are ahead (strict FIFO). The first
 *   waiter watches the children list (any holder leaving frees its permit); later waiters
 *   watch their predecessor, which writes {@link ACQUIRED_MARKER} when it gets a permit, so
 *   each event wakes exactly one waiter.
 */
export function decide(
  kind: LockKind,
  maxCount: number,
  queue: readonly QueueNode[],
  own: string,
): Decision {
  const index = queue.findIndex((node) => node.name === own);
  if (index < 0) return { action: 'missing' };
  const successors = queue.length - index - 1;
  switch (kind) {
    case 'mutex':
    case 'write':
      return index === 0
        ? { action: 'granted', successors }
        : { action: 'watch-node', node: queue[index - 1]!.name };
    case 'read': {
      for (let i = index - 1; i >= 0; i--) {
        if (queue[i]!.kind === 'write') return { action: 'watch-node', node: queue[i]!.name };
      }
      return { action: 'granted', successors };
    }
    case 'semaphore':
      if (index < maxCount) return { action: 'granted', successors };
      if (index === maxCount) return { action: 'watch-children' };
      return { action: 'watch-node', node: queue[index - 1]!.name };
  }
}
