import type { Votes } from './redis-node-set.js';

/**
 * An acquire script's reply (see acquire-scripts.ts): granted = the fencing token (an integer
 * >= 1, or a decimal string from 10^14 on); refused = an integer < 1.
 */
export const isGrant = (reply: unknown): reply is number | string =>
  typeof reply === 'number' ? reply >= 1 : typeof reply === 'string';
/** A refusal's retry hint in ms (-2 - h encodes h), or -1 for none (0: busy, -1: cancelled). */
export const refusalHintMs = (reply: number): number => (reply <= -2 ? -2 - reply : -1);
export const isYes = (reply: unknown): boolean => reply === 1;
/** The extend script ran (1: extended, 0: not ours there) — either way it raised the fence. */
export const ran = (reply: unknown): boolean => reply === 1 || reply === 0;

/** A node's vote that granted the acquire. */
export function isGrantVote(vote: Votes[number]): boolean {
  return vote?.ok === true && isGrant(vote.value);
}

/** How many nodes granted with exactly `token`: their fencing counters stand at it. */
export function grantsAt(votes: Votes, token: bigint): number {
  let count = 0;
  for (const vote of votes) {
    if (vote?.ok && isGrant(vote.value) && BigInt(vote.value) === token) count += 1;
  }
  return count;
}
