import type { LockKind } from '@lockkit/core';
import { excludesAll } from './sharing.js';

/** The fenced resource of one lock name (Kleppmann's storage service). */
export interface FenceState {
  /** Highest token accepted so far, from any holder. */
  maxToken: bigint | undefined;
  /** Highest token accepted from a holder that excludes everyone (a mutex, a writer). */
  maxExclusiveToken: bigint | undefined;
  accepted: number;
  rejected: number;
  /** Accepted tokens of holders that exclude everyone, in the order accepted (for the audit). */
  readonly acceptedTokens: bigint[];
  /** Semaphore: the `capacity` highest distinct tokens accepted, highest first. */
  readonly topTokens: bigint[];
}

/** A fence that has accepted nothing yet. */
export function newFence(): FenceState {
  return {
    maxToken: undefined,
    maxExclusiveToken: undefined,
    accepted: 0,
    rejected: 0,
    acceptedTokens: [],
    topTokens: [],
  };
}

/**
 * Whether the fence accepts a write with `token` from a holder of `kind`, and records it.
 * A mutex's or a writer's write needs a token ≥ every token accepted so far (a newer reader
 * or writer has taken over otherwise); a reader's, a token ≥ every writer's accepted so far
 * (readers share, so their tokens may come in any order); a permit's, a token below fewer
 * than `capacity` distinct accepted tokens (that many newer permits have taken over
 * otherwise).
 */
export function fenceAccepts(
  fence: FenceState,
  token: bigint,
  kind: LockKind,
  capacity: number,
): boolean {
  let accepted: boolean;
  if (kind === 'semaphore') {
    accepted = fence.topTokens.filter((top) => top > token).length < capacity;
  } else if (excludesAll(kind)) {
    accepted = fence.maxToken === undefined || token >= fence.maxToken;
  } else {
    accepted = fence.maxExclusiveToken === undefined || token >= fence.maxExclusiveToken;
  }
  if (!accepted) {
    fence.rejected += 1;
    return false;
  }
  fence.accepted += 1;
  if (fence.maxToken === undefined || token > fence.maxToken) fence.maxToken = token;
  if (excludesAll(kind)) {
    fence.maxExclusiveToken = token;
    fence.acceptedTokens.push(token);
  }
  if (kind === 'semaphore' && !fence.topTokens.includes(token)) {
    fence.topTokens.push(token);
    fence.topTokens.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    fence.topTokens.length = Math.min(fence.topTokens.length, capacity);
  }
  return true;
}
