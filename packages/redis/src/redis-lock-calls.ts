import type { LockRequest } from '@lockkit/core/backend';
import type { RedisLockKeys } from './redis-keys.js';
import { isGrant, ran } from './script-replies.js';
import type { ScriptCall } from './script-sender.js';
import {
  acquireMutex,
  acquireRead,
  acquireSemaphore,
  acquireWrite,
  redrawFence,
} from './scripts/acquire-scripts.js';
import {
  extendMember,
  extendString,
  releaseMember,
  releasePermits,
  releaseString,
  unregisterWaiter,
  withdrawWriter,
} from './scripts/release-scripts.js';

/**
 * Where a node's releases publish: the channel (with the client's keyPrefix) and the command,
 * PUBLISH, or SPUBLISH on a Redis Cluster (sharded pub/sub: delivered by the node that owns the
 * lock's slot, where the subscriber listens, without the cluster bus).
 */
export interface ReleaseChannel {
  readonly name: string;
  readonly publish: 'PUBLISH' | 'SPUBLISH';
}

/**
 * A waiting writer's marker, or a waiting weighted semaphore request's reservation: its id and
 * how long it lasts without a refresh (0 = none).
 */
export interface WriterMarker {
  readonly waiterId: string;
  readonly markerMs: number;
}

/**
 * This provider's entry in a mutex's or semaphore's waiters set: its id, how long a
 * registration lasts (0 = do not register: the request is not waiting), and whether a grant
 * leaves the provider without waiters for the lock (then the grant unregisters it).
 */
export interface WaiterRegistration {
  readonly providerId: string;
  readonly registerMs: number;
  readonly last: boolean;
}

/** One acquire attempt: what its script call is made of, the same on every node. */
export interface AcquireAttempt {
  readonly request: LockRequest;
  readonly keys: RedisLockKeys;
  /** The hold's token (a fresh UUID per attempt). */
  readonly token: string;
  readonly leaseMs: number;
  readonly marker: WriterMarker;
  readonly waiter: WaiterRegistration;
  /** Write the hold's inspection record (the `recordHolds` option). */
  readonly recordHold: boolean;
}

/** The acquire script of a request's kind. */
export function acquireCall(attempt: AcquireAttempt, channel: ReleaseChannel): ScriptCall {
  const { request } = attempt;
  // The hold's inspection record: grant time (our clock) and owner; the script adds the token.
  // '' = none (recordHolds: false): the script writes no record.
  const info = attempt.recordHold ? `${Date.now()}:${request.owner ?? ''}` : '';
  const call = acquireScriptCall(attempt, channel, info);
  // A grant also incremented the fencing counter: both must reach the replicas.
  return { script: call.script, keys: call.keys, args: call.args, acknowledge: isGrant };
}

function acquireScriptCall(
  { request, keys, token, leaseMs, marker, waiter }: AcquireAttempt,
  channel: ReleaseChannel,
  info: string,
): ScriptCall {
  const cancel = keys.cancel(token);
  const reservation = marker; // a semaphore's reservation travels as its marker
  // The waiters set is only touched by an attempt that registers or unregisters this provider.
  const touchesWaiters = waiter.registerMs > 0 || waiter.last;
  switch (request.kind) {
    case 'mutex':
      return touchesWaiters
        ? {
            script: acquireMutex,
            keys: [keys.lock, keys.fence, cancel, keys.holds, keys.waiters],
            args: [
              token,
              leaseMs,
              info,
              waiter.providerId,
              waiter.registerMs,
              waiter.last ? '1' : '0',
            ],
          }
        : {
            script: acquireMutex,
            keys: [keys.lock, keys.fence, cancel, keys.holds],
            args: [token, leaseMs, info],
          };
    case 'semaphore': {
      const { maxCount } = request;
      const args = [
        token,
        leaseMs,
        maxCount,
        info,
        request.permits ?? 1,
        reservation.waiterId,
        reservation.markerMs,
        channel.name,
        channel.publish,
      ];
      const semaphoreKeys = [keys.lock, keys.fence, cancel, keys.holds, keys.reservations];
      return touchesWaiters
        ? {
            script: acquireSemaphore,
            keys: [...semaphoreKeys, keys.waiters],
            args: [...args, waiter.providerId, waiter.registerMs, waiter.last ? '1' : '0'],
          }
        : { script: acquireSemaphore, keys: semaphoreKeys, args };
    }
    case 'read':
      return {
        script: acquireRead,
        keys: [keys.lock, keys.readers, keys.writersWaiting, keys.fence, cancel, keys.holds],
        args: [token, leaseMs, info],
      };
    case 'write':
      return {
        script: acquireWrite,
        keys: [keys.lock, keys.readers, keys.writersWaiting, keys.fence, cancel, keys.holds],
        args: [token, leaseMs, marker.waiterId, marker.markerMs, info],
      };
  }
}

/** The key holding this kind's hold: a string (mutex, writer) or a sorted set (semaphore, reader). */
export function holdKey(request: LockRequest, keys: RedisLockKeys): string {
  return request.kind === 'read' ? keys.readers : keys.lock;
}

export function holdIsMember(request: LockRequest): boolean {
  return request.kind === 'read' || request.kind === 'semaphore';
}

/** Mutex and semaphore releases wake one waiting provider; RW releases wake every waiter. */
export function wakesOneProvider(request: LockRequest): boolean {
  return request.kind === 'mutex' || request.kind === 'semaphore';
}

/**
 * Token-checked release. `channel` is the node's release channel; `tombstoneMs` > 0 leaves
 * a cancel marker when the hold is not found (undoing an attempt whose outcome is unknown);
 * `fenceFloor` raises the fencing counter (Redlock).
 */
export function releaseCall(
  request: LockRequest,
  keys: RedisLockKeys,
  token: string,
  channel: ReleaseChannel,
  tombstoneMs: number,
  fenceFloor: string,
): ScriptCall {
  const { name, publish } = channel;
  if (request.kind === 'semaphore') {
    const permits = request.permits ?? 1;
    const base = [keys.lock, keys.waiters, keys.reservations, keys.holds];
    if (tombstoneMs === 0 && fenceFloor === '') {
      return { script: releasePermits, keys: base, args: [token, name, publish, permits] };
    }
    return {
      script: releasePermits,
      keys: [...base, keys.fence, keys.cancel(token)],
      args: [token, name, publish, permits, tombstoneMs, fenceFloor],
    };
  }
  const script = holdIsMember(request) ? releaseMember : releaseString;
  const hold = holdKey(request, keys);
  const targeted = wakesOneProvider(request) ? '1' : '0';
  if (tombstoneMs === 0 && fenceFloor === '') {
    return {
      script,
      keys: [hold, keys.waiters, keys.holds],
      args: [token, name, targeted, publish],
    };
  }
  return {
    script,
    keys: [hold, keys.waiters, keys.holds, keys.fence, keys.cancel(token)],
    args: [token, name, targeted, publish, tombstoneMs, fenceFloor],
  };
}

/**
 * Redlock: lift the fencing counter to `floor` and draw the next value for the hold `token`,
 * if the node still holds it (see redrawFence).
 */
export function redrawCall(
  request: LockRequest,
  keys: RedisLockKeys,
  floor: string,
  token: string,
): ScriptCall {
  const member = holdIsMember(request) ? '1' : '';
  const keyList = [keys.fence, keys.holds, holdKey(request, keys)];
  return { script: redrawFence, keys: keyList, args: [floor, token, member] };
}

/** Token-checked lease extension to `leaseMs` from now. */
export function extendCall(
  request: LockRequest,
  keys: RedisLockKeys,
  token: string,
  leaseMs: number,
  fenceFloor: string,
): ScriptCall {
  return {
    script: holdIsMember(request) ? extendMember : extendString,
    keys: [holdKey(request, keys), keys.fence, keys.holds],
    args:
      request.kind === 'semaphore' && (request.permits ?? 1) > 1
        ? [token, leaseMs, fenceFloor, request.permits ?? 1]
        : [token, leaseMs, fenceFloor],
    // The new expiry (and a raised fence) must reach the replicas, or a promoted one would
    // free the lock earlier than the holder believes.
    acknowledge: ran,
  };
}

/** A provider has no more waiters for a mutex or semaphore (`passOn`: wake the next provider). */
export function unregisterCall(
  keys: RedisLockKeys,
  providerId: string,
  channel: ReleaseChannel,
  passOn: boolean,
): ScriptCall {
  return {
    script: unregisterWaiter,
    keys: [keys.waiters],
    args: [providerId, channel.name, passOn ? '1' : '0', channel.publish],
  };
}

/**
 * A waiting writer gives up: its marker goes and the readers it held back are woken; or a
 * waiting weighted semaphore request (`key`: the reservations set) gives up its reservation.
 */
export function withdrawCall(
  keys: RedisLockKeys,
  key: string,
  waiterId: string,
  channel: ReleaseChannel,
): ScriptCall {
  return {
    script: withdrawWriter,
    keys: [key],
    args: [waiterId, channel.name, channel.publish, key === keys.reservations ? '!' : '*'],
  };
}
