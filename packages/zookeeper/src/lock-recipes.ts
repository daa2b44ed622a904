/**
 * The Curator-style queue recipes, as pure functions over a parent's children. Every
 * contender creates an ephemeral-sequential child; the server's sequence number is its place
 * in one FIFO queue, and each kind decides from that queue whether it holds the lock or
 * which single node it must watch (so a release wakes one waiter, not all of them).
 *
 * @module
 */
import type { LockKind } from '@lockkit/core';
import { queueDecision } from '@lockkit/core/backend';

/** Node name prefix of each kind; the RW lock's two modes share one parent. */
export const nodePrefixes: Readonly<Record<LockKind, string>> = {
  mutex: 'lock-',
  read: 'read-',
  write: 'write-',
  semaphore: 'lease-',
};

/**
 * Node name prefix of a semaphore contender taking `permits` at once: `lease-` for one,
 * `leases<n>-` for more (its weight in the queue).
 */
export function nodePrefixOf(kind: LockKind, permits = 1): string {
  return kind === 'semaphore' && permits > 1 ? `leases${permits}-` : nodePrefixes[kind];
}

/** Data a semaphore holder writes into its node when waiters may be watching it. */
export const ACQUIRED_MARKER: Buffer = Buffer.from('ACQUIRED');

/** A parsed child: `<prefix><uuid>-<sequence>`. */
export interface QueueNode {
  readonly name: string;
  readonly kind: LockKind;
  readonly id: string;
  /** Semaphore permits the contender takes (1 for every other kind). */
  readonly permits: number;
  /** The server's sequence number, read as unsigned 32-bit so a wrapped counter still sorts. */
  readonly sequence: number;
}

const nodePattern =
  /^(lock|read|write|lease|leases[1-9]\d{0,9})-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(-?\d{10,11})$/;

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
  const tag = match[1]!;
  const weighted = tag.startsWith('leases');
  const kind = weighted ? 'semaphore' : kindOfPrefix[tag]!;
  const permits = weighted ? Number(tag.slice('leases'.length)) : 1;
  return { name, kind, id: match[2]!, permits, sequence: Number(match[3]) >>> 0 };
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
 * Decides for the contender whose node is `own` (core's queue recipe, {@link queueDecision}). A
 * semaphore holder marks its node with {@link ACQUIRED_MARKER}, which wakes the waiter behind it.
 */
export function decide(
  kind: LockKind,
  maxCount: number,
  queue: readonly QueueNode[],
  own: string,
): Decision {
  const index = queue.findIndex((node) => node.name === own);
  if (index < 0) return { action: 'missing' };
  const next = queueDecision(kind, maxCount, queue, index);
  if (next.action === 'watch') return { action: 'watch-node', node: queue[next.index]!.name };
  if (next.action === 'watch-all') return { action: 'watch-children' };
  return next;
}

/**
 * Whether `own` would be granted once `blocker` (the node it watches) is gone, whatever else
 * happens meanwhile: only for the kinds whose grant cannot be taken back by nodes that join
 * later (they join behind us) or by other nodes ahead leaving. Not for semaphores, whose
 * grant also says how many waiters to tell (`successors`).
 */
export function grantedWithout(
  request: { readonly kind: LockKind; readonly maxCount: number },
  queue: readonly QueueNode[],
  own: string,
  blocker: string,
): boolean {
  if (request.kind === 'semaphore') return false;
  const rest = queue.filter((node) => node.name !== blocker);
  return decide(request.kind, request.maxCount, rest, own).action === 'granted';
}
