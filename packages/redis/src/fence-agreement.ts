import { BackendUnavailableError } from '@lockkit/core';
import { now } from '@lockkit/core/backend';
import type { RedisLockKeys } from './redis-keys.js';
import { redrawCall } from './redis-lock-calls.js';
import type { RedisNodeSet, Votes } from './redis-node-set.js';
import { grantsAt, isGrant } from './script-replies.js';

/**
 * Redraws after which a grant whose nodes keep disagreeing gives up. Without other draws of
 * the same name in between, the second redraw at the latest agrees: the first lifts every node
 * to the largest value seen, the next one (if a node stood higher still) lifts them to that.
 */
export const maxRedraws = 4;

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

/** How a Redlock grant's fencing token was settled. */
export type Agreement =
  | { readonly agreed: true; readonly token: bigint }
  | { readonly agreed: false; readonly votes: Votes; readonly contended: boolean };

/**
 * The fencing token of a Redlock grant: a value `quorum` nodes returned to this grant in one
 * round. The acquire round usually is that round (its counters agree: no extra round trip);
 * otherwise every node lifts its counter to the largest value drawn so far and draws again,
 * until a quorum agrees. A node never returns a value twice, so no two grants of a name get
 * the same token (their quorums share a node), and any later grant's quorum shares a node with
 * this one and draws above it there. All redraws share one command timeout.
 */
export async function agreeOnToken(
  nodes: RedisNodeSet,
  keys: RedisLockKeys,
  quorum: number,
  votes: Votes,
  validUntil: number,
  holdToken: string,
): Promise<Agreement> {
  let token = largestDraw(votes);
  let round = votes;
  const started = now();
  for (let redraws = 0; grantsAt(round, token) < quorum; redraws += 1) {
    if (redraws === maxRedraws) return { agreed: false, votes: round, contended: true };
    round = await nodes.vote(quorum, redrawCall(keys, String(token), holdToken), isGrant, started);
    const drawn = round.filter((vote) => vote?.ok === true && isGrant(vote.value)).length;
    if (drawn < quorum || now() >= validUntil) {
      return { agreed: false, votes: round, contended: false };
    }
    token = largestDraw(round);
  }
  return { agreed: true, token };
}

/** Concurrent grants of the name kept drawing between our redraws: try again later. */
export function contendedError(lockName: string): BackendUnavailableError {
  return new BackendUnavailableError(
    `Redis acquire of "${lockName}": the nodes' fencing counters did not agree after ${maxRedraws} redraws (concurrent grants)`,
    { lockName, retryable: true },
  );
}
