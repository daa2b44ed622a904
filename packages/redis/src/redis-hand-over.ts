/**
 * Hand-over on Redis (`capabilities.handOver`): a hold is the lock's keys carrying the
 * holder's random token (and, on Redlock, the fencing floor every extension raises the nodes'
 * counters to), with a lease. A resumer moves the hold onto a fresh token of its own (see
 * hand-over-scripts.ts): granted when a quorum moved it while it was still the exported
 * token's, so a released, expired or forged hold is refused, and so is a token that was
 * already resumed (the first resume wins; the exporter's identity is gone with it). A resume
 * that did not win is moved back where it moved, or cancelled where its outcome is unknown.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { BackendUnavailableError, InvalidArgumentError } from '@lockkit/core';
import { type GrantData, type LockRequest, now } from '@lockkit/core/backend';
import type { RedisGrant } from './redis-grant.js';
import type { RedisLockKeys } from './redis-keys.js';
import { holdIsMember, holdKey } from './redis-lock-calls.js';
import type { RedisNodeSet, Votes } from './redis-node-set.js';
import { clockDriftMs, lockQuorumOf } from './redlock-quorum.js';
import { isYes, ran } from './script-replies.js';
import type { ScriptCall } from './script-sender.js';
import { rotateMember, rotateString } from './scripts/hand-over-scripts.js';

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

/** The backend's defaults a resume uses. */
interface ResumeDefaults {
  readonly leaseMs: number;
  readonly autoExtend: boolean;
}

/**
 * Continues an exported hold under a fresh token: the grant, or `null` if the hold is not
 * (any more) the token's on a quorum.
 */
export async function resumeRedisGrant(
  nodes: RedisNodeSet,
  defaults: ResumeDefaults,
  keysOf: (request: LockRequest) => RedisLockKeys,
  request: LockRequest,
  data: GrantData,
  fencingToken: bigint,
  durationMs: number | undefined,
): Promise<RedisGrant | null> {
  const { token, fenceFloor } = data;
  // Redlock raises the nodes' counters to the floor: it must be the hold's own token.
  const floor = nodes.size > 1 ? String(fencingToken) : '';
  if (typeof token !== 'string' || token.length === 0 || fenceFloor !== floor) {
    throw new InvalidArgumentError('Not a Redis hand-over token of this topology');
  }
  const leaseMs = durationMs ?? request.leaseMs ?? defaults.leaseMs;
  const autoExtend = request.autoExtend ?? defaults.autoExtend;
  const keys = keysOf(request);
  const fresh = randomUUID();
  const quorum = lockQuorumOf(nodes.size, request);
  const started = now();
  const move = rotateCall(request, keys, token, fresh, leaseMs, floor, 0);
  const votes = await nodes.vote(quorum, move, isYes, started);
  const held = nodes.verdict(quorum, votes);
  const validUntil = started + leaseMs - clockDriftMs(leaseMs);
  if (held === true && now() < validUntil) {
    const lease = { durationMs: leaseMs, validUntil, autoExtend };
    return { fencingToken, token: fresh, fenceFloor: floor, lease };
  }
  // Not won: move it back wherever it moved or may still move.
  const back = rotateCall(request, keys, fresh, token, leaseMs, floor, leaseMs);
  undoWhereMoved(nodes, votes, back, 2 * leaseMs);
  if (held === false) return null;
  if (held === true) {
    throw new BackendUnavailableError(`Resuming "${request.name}" took longer than the lease`, {
      lockName: request.name,
    });
  }
  throw nodes.unavailable(request.name, 'resume', votes);
}

/** Runs `back` on every node that moved the hold or may have (a node that said no did not). */
function undoWhereMoved(nodes: RedisNodeSet, votes: Votes, back: ScriptCall, ms: number): void {
  nodes.nodes.forEach((node, index) => {
    const vote = votes[index];
    if (vote?.ok && !isYes(vote.value)) return;
    if (vote && !vote.ok && !(vote.error as { mayHaveRun?: boolean }).mayHaveRun) return;
    nodes.persist(node, back, ms);
  });
}

/**
 * Moves a hold from token `from` to `to` with a lease of `leaseMs` from now; `tombstoneMs` > 0
 * (undoing a resume) cancels the resume to `from` where it has not run.
 */
function rotateCall(
  request: LockRequest,
  keys: RedisLockKeys,
  from: string,
  to: string,
  leaseMs: number,
  floor: string,
  tombstoneMs: number,
): ScriptCall {
  // The cancel marker is the resume's fresh token's: `to` on the way there, `from` back.
  const cancel = keys.cancel(tombstoneMs > 0 ? from : to);
  const keyList = [holdKey(request, keys), keys.fence, keys.holds, cancel];
  const args = [from, to, leaseMs, floor, tombstoneMs];
  return holdIsMember(request)
    ? {
        script: rotateMember,
        keys: keyList,
        args: [...args, request.permits ?? 1],
        acknowledge: ran,
      }
    : { script: rotateString, keys: keyList, args, acknowledge: ran };
}
