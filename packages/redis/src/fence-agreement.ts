import { randomInt } from 'node:crypto';
import { BackendUnavailableError } from '@lockkit/core';
import { type LockRequest, now } from '@lockkit/core/backend';
import type { RedisLockKeys } from './redis-keys.js';
import { redrawCall } from './redis-lock-calls.js';
import type { RedisNodeSet, Votes } from './redis-node-set.js';
import { isGrant } from './script-replies.js';

/**
 * Redraws after which a grant whose nodes keep disagreeing gives up. Without other draws of
 * the same name in between, the second redraw at the latest agrees: the first lifts every node
 * to the largest value seen, the next one (if a node stood higher still) lifts them to that.
 */
export const maxRedraws = 4;

/** The random lift of a floor after a redraw round that did not agree is below this. */
export const floorSpread = 1024;

/** The largest counter among the granting votes (0n: none). */
export function largestDraw(votes: Votes): bigint {
  let largest = 0n;
  for (const vote of votes) {
    if (vote?.ok && isGrant(vote.value)) {
      const value = BigInt(vote.value);
      if (value > largest) largest = value;
    }
  }
  return largest;
}

/**
 * The largest value at least `quorum` nodes returned in one round (undefined: none did). Any
 * such value is a valid token, not only the round's largest: a node that did not grant may
 * have counted other grants in between and stand higher than every holder.
 */
export function agreedDraw(votes: Votes, quorum: number): bigint | undefined {
  const counts = new Map<bigint, number>();
  let agreed: bigint | undefined;
  for (const vote of votes) {
    if (!(vote?.ok && isGrant(vote.value))) continue;
    const value = BigInt(vote.value);
    const count = (counts.get(value) ?? 0) + 1;
    counts.set(value, count);
    if (count >= quorum && (agreed === undefined || value > agreed)) agreed = value;
  }
  return agreed;
}

/**
 * How a Redlock grant's fencing token was settled, or why not: concurrent grants kept the
 * counters apart (`contended`), the hold ran out on a quorum before a draw (`lost`), or no
 * quorum answered (`unavailable`).
 */
export type Agreement =
  | { readonly agreed: true; readonly token: bigint }
  | {
      readonly agreed: false;
      readonly votes: Votes;
      readonly why: 'contended' | 'lost' | 'unavailable';
    };

/**
 * The fencing token of a Redlock grant: a value `quorum` nodes returned to this grant in one
 * round. The acquire round usually is that round (its counters agree: no extra round trip);
 * otherwise every node lifts its counter to the largest value drawn so far (the floor) and
 * draws again, until a quorum agrees. A node never returns a value twice, so no two grants of
 * a name get the same token (their quorums share a node), and any later grant's quorum shares
 * a node with this one and draws above it there. All redraws share one command timeout.
 *
 * A redraw round is decided by the nodes that drew exactly floor + 1 (the holders of an
 * exclusive grant all do: nobody else draws on them while it holds), not by the first quorum
 * to answer: a node that did not grant and kept counting other grants answers with more,
 * and must not make the holders redraw (issue 24). A round without a quorum at floor + 1
 * waits for every node's draw (or its command timeout), so the next floor is the largest.
 * A node draws only while it still holds the grant: one whose lease ran out meanwhile (its
 * clock jumped ahead) answers 0, and a quorum that no longer holds it ends the grant.
 */
export async function agreeOnToken(
  nodes: RedisNodeSet,
  grant: { readonly request: LockRequest; readonly keys: RedisLockKeys; readonly token: string },
  quorum: number,
  votes: Votes,
  validUntil: number,
): Promise<Agreement> {
  let agreed = agreedDraw(votes, quorum);
  let round = votes;
  const started = now();
  for (let redraws = 0; agreed === undefined; redraws += 1) {
    if (redraws === maxRedraws) return { agreed: false, votes: round, why: 'contended' };
    // After a round that did not agree, a random lift: two shared grants (readers, permits)
    // redrawing together from one floor, counted in opposite orders on two nodes, fail
    // together every round; from different floors the higher target agrees on every node
    // whichever came first there, and the other agrees in the next round.
    const floor = largestDraw(round) + (redraws > 0 ? BigInt(randomInt(floorSpread)) : 0n);
    const target = floor + 1n;
    const isTarget = (reply: unknown): boolean => isGrant(reply) && BigInt(reply) === target;
    const call = redrawCall(grant.request, grant.keys, String(floor), grant.token);
    // Another value is no vote either way: wait for the other nodes (a quorum of them may
    // still draw the target); a failed draw is a no.
    round = await nodes.vote(quorum, call, isTarget, started, (reply) => !isGrant(reply));
    const drawn = round.filter((vote) => vote?.ok === true && isGrant(vote.value)).length;
    const gone = round.filter((vote) => vote?.ok === true && vote.value === 0).length;
    if (gone > nodes.size - quorum) return { agreed: false, votes: round, why: 'lost' };
    if (drawn < quorum || now() >= validUntil) {
      return { agreed: false, votes: round, why: 'unavailable' };
    }
    agreed = agreedDraw(round, quorum);
  }
  return { agreed: true, token: agreed };
}

/** Concurrent grants of the name kept drawing between our redraws: try again later. */
export function contendedError(lockName: string): BackendUnavailableError {
  return new BackendUnavailableError(
    `Redis acquire of "${lockName}": the nodes' fencing counters did not agree after ${maxRedraws} redraws (concurrent grants)`,
    { lockName, retryable: true },
  );
}
