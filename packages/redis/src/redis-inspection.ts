import type { BackendLockState, LockHolder, LockRequest } from '@lockkit/core/backend';
import type { RedisLockKeys } from './redis-keys.js';
import type { ReleaseChannel } from './redis-lock-calls.js';
import type { RedisNode } from './redis-node.js';
import type { RedisNodeSet, Votes } from './redis-node-set.js';
import type { ScriptCall } from './script-sender.js';
import { breakHolds, inspectHolds } from './scripts/inspect-scripts.js';

/*
 * `inspect()` and `forceRelease()` over one node or a Redlock: every node is asked at once
 * and every answer is awaited (each within the command timeout). A majority must answer. A
 * hold counts once, by its random hold token, when as many nodes report it as a grant needs
 * (`quorum`), less the nodes that did not answer: a hold granted on a quorum is then seen,
 * and the remains of an attempt that never had a quorum are not.
 */

/** Where a lock's holds live: KEYS and the family argument of the inspection scripts. */
function holdKeys(request: LockRequest, keys: RedisLockKeys): { keys: string[]; family: string } {
  switch (request.kind) {
    case 'mutex':
      return { keys: [keys.holds, keys.lock], family: 'mutex' };
    case 'semaphore':
      return { keys: [keys.holds, keys.lock], family: 'semaphore' };
    default:
      return { keys: [keys.holds, keys.lock, keys.readers], family: 'rw' };
  }
}

/** Reads one node's holds (see inspectHolds). */
export function inspectCall(request: LockRequest, keys: RedisLockKeys): ScriptCall {
  const { keys: holdKeyList, family } = holdKeys(request, keys);
  return { script: inspectHolds, keys: holdKeyList, args: [family] };
}

/** Breaks one node's holds and wakes the lock's waiters on `channel` (see breakHolds). */
export function breakCall(
  request: LockRequest,
  keys: RedisLockKeys,
  channel: ReleaseChannel,
): ScriptCall {
  const { keys: holdKeyList, family } = holdKeys(request, keys);
  return {
    script: breakHolds,
    keys: holdKeyList,
    args: [family, channel.name, channel.publish],
    // The deletion must reach the replicas, or a promoted one would bring the holds back.
    acknowledge: () => true,
  };
}

/** One node's reading of one hold. */
interface NodeHold {
  readonly kind: LockHolder['kind'];
  readonly leftMs: number;
  readonly permits: number;
  readonly record: string;
}

/** Node answers that a majority gave, or undefined when too few nodes answered. */
function answered(votes: Votes, majority: number): unknown[][] | undefined {
  const replies = votes.flatMap((vote) =>
    vote?.ok && Array.isArray(vote.value) ? [vote.value] : [],
  );
  return replies.length >= majority ? replies : undefined;
}

/** How many nodes must report a hold for it to count (see the module comment). */
function seenOn(quorum: number, nodeCount: number, answers: number): number {
  return Math.max(1, quorum - (nodeCount - answers));
}

/** Combines the nodes' `inspectHolds` replies into holds (undefined: too few answered). */
export function holdsOf(
  votes: Votes,
  nodeCount: number,
  quorum: number,
  majority: number,
): BackendLockState | undefined {
  const replies = answered(votes, majority);
  if (replies === undefined) return undefined;
  const byToken = new Map<string, NodeHold[]>();
  for (const reply of replies) {
    for (let i = 0; i + 4 < reply.length; i += 5) {
      const token = String(reply[i + 1]);
      const hold: NodeHold = {
        kind: String(reply[i]) as LockHolder['kind'],
        leftMs: Number(reply[i + 2]),
        permits: Number(reply[i + 3]),
        record: String(reply[i + 4]),
      };
      const seen = byToken.get(token);
      if (seen) seen.push(hold);
      else byToken.set(token, [hold]);
    }
  }
  const needed = seenOn(quorum, nodeCount, replies.length);
  const readAt = Date.now();
  const holders: LockHolder[] = [];
  for (const seen of byToken.values()) {
    if (seen.length < needed) continue;
    holders.push(holderOf(seen, Math.min(quorum, seen.length), readAt));
  }
  return { holders, waiting: undefined };
}

/**
 * One hold from the nodes that reported it: valid while `quorum` of them still hold it (the
 * quorum-th longest lease left); its fencing token is the one most records give (a Redlock
 * grant's token is one a quorum returned, and each of those nodes recorded it).
 */
function holderOf(seen: readonly NodeHold[], quorum: number, readAt: number): LockHolder {
  const left = seen.map((hold) => hold.leftMs).sort((a, b) => b - a);
  const leftMs = left[quorum - 1] as number;
  const counts = new Map<string, number>();
  let owner: string | undefined;
  let since: number | undefined;
  for (const { record } of seen) {
    const first = record.indexOf(':');
    const second = record.indexOf(':', first + 1);
    const fence = record.slice(0, first);
    if (second < 0 || !/^[0-9]+$/.test(fence)) continue; // no record: an older client's hold
    counts.set(fence, (counts.get(fence) ?? 0) + 1);
    since = Number(record.slice(first + 1, second));
    owner = record.slice(second + 1);
  }
  let fencingToken: bigint | undefined;
  let best = 0;
  for (const [fence, count] of counts) {
    const value = BigInt(fence);
    if (count > best || (count === best && fencingToken !== undefined && value > fencingToken)) {
      fencingToken = value;
      best = count;
    }
  }
  const kind = (seen[0] as NodeHold).kind;
  return {
    kind,
    fencingToken,
    // Every node granted the hold's n permits at once (see acquireSemaphore).
    permits: Math.max(...seen.map((hold) => hold.permits)),
    owner,
    since,
    validUntil: leftMs < 0 ? Number.POSITIVE_INFINITY : readAt + leftMs,
  };
}

/** How many distinct holds the nodes' `breakHolds` replies broke (undefined: too few answered). */
export function brokenCount(
  votes: Votes,
  nodeCount: number,
  quorum: number,
  majority: number,
): number | undefined {
  const replies = answered(votes, majority);
  if (replies === undefined) return undefined;
  const times = new Map<string, number>();
  for (const reply of replies) {
    for (const token of reply) times.set(String(token), (times.get(String(token)) ?? 0) + 1);
  }
  const needed = seenOn(quorum, nodeCount, replies.length);
  let count = 0;
  for (const seen of times.values()) if (seen >= needed) count += 1;
  return count;
}

/** Reads a lock's holds on every node (rejects when no majority answered). */
export async function inspectNodes(
  nodes: RedisNodeSet,
  request: LockRequest,
  keys: RedisLockKeys,
  quorum: number,
): Promise<BackendLockState> {
  const votes = await nodes.all(() => inspectCall(request, keys));
  const state = holdsOf(votes, nodes.size, quorum, nodes.majority);
  if (state === undefined) throw nodes.unavailable(request.name, 'inspect', votes);
  return state;
}

/** Breaks a lock's holds on every node it reaches (rejects when no majority answered). */
export async function breakNodes(
  nodes: RedisNodeSet,
  request: LockRequest,
  keys: RedisLockKeys,
  quorum: number,
  channelOf: (node: RedisNode) => ReleaseChannel,
): Promise<number> {
  const votes = await nodes.all((node) => breakCall(request, keys, channelOf(node)));
  const broken = brokenCount(votes, nodes.size, quorum, nodes.majority);
  if (broken === undefined) throw nodes.unavailable(request.name, 'forceRelease', votes);
  return broken;
}
