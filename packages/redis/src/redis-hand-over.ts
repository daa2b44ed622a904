/**
 * Hand-over on Redis (`capabilities.handOver`): a hold is the lock's keys carrying the
 * holder's random token (and, on Redlock, the fencing floor every extension raises the nodes'
 * counters to), with a lease. Another provider continues it by extending it with that token:
 * the token-checked extend script succeeds on a quorum only while the hold is still that
 * token's, so a released, expired or forged hold is refused there.
 *
 * @module
 */
import { InvalidArgumentError } from '@lockkit/core';
import type { GrantData, LeaseInfo, LockRequest } from '@lockkit/core/backend';

/** The shape of a `RedisGrant` (redis-lock-backend.ts, not imported: no cycle). */
interface RedisGrant {
  readonly fencingToken: bigint;
  readonly lease: LeaseInfo;
  readonly token: string;
  readonly fenceFloor: string;
}

/** What a resumer needs of the backend. */
export interface RedisResumer {
  extend(request: LockRequest, grant: RedisGrant, leaseMs: number): Promise<number | false>;
}

/** The grant data a token carries. */
export function exportRedisGrant(_request: LockRequest, grant: RedisGrant): GrantData {
  return { token: grant.token, fenceFloor: grant.fenceFloor };
}

/** `LockBackend.resumeGrant` of a Redis backend. */
export type RedisResumeGrant = (
  request: LockRequest,
  data: GrantData,
  fencingToken: bigint,
  durationMs: number | undefined,
) => Promise<RedisGrant | null>;

/** Continues an exported hold: one token-checked extension, or `null` if it is not ours. */
export async function resumeRedisGrant(
  backend: RedisResumer,
  defaults: { readonly leaseMs: number; readonly autoExtend: boolean },
  nodes: number,
  request: LockRequest,
  data: GrantData,
  fencingToken: bigint,
  durationMs: number | undefined,
): Promise<RedisGrant | null> {
  const { token, fenceFloor } = data;
  // Redlock raises the nodes' counters to the floor: it must be the hold's own token.
  const floor = nodes > 1 ? String(fencingToken) : '';
  if (typeof token !== 'string' || token.length === 0 || fenceFloor !== floor) {
    throw new InvalidArgumentError('Not a Redis hand-over token of this topology');
  }
  const leaseMs = durationMs ?? request.leaseMs ?? defaults.leaseMs;
  const autoExtend = request.autoExtend ?? defaults.autoExtend;
  const grant: RedisGrant = {
    fencingToken,
    token,
    fenceFloor: floor,
    lease: { durationMs: leaseMs, validUntil: 0, autoExtend },
  };
  const validUntil = await backend.extend(request, grant, leaseMs);
  if (validUntil === false) return null;
  return { ...grant, lease: { durationMs: leaseMs, validUntil, autoExtend } };
}
