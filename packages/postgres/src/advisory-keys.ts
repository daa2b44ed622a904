import type { LockKind } from '@lockkit/core';
import { base32, int64Key, type LockRequest, nameDigest } from '@lockkit/core/backend';

/**
 * Name → advisory-lock keys (mapping version 1 of `@lockkit/core`, golden-tested).
 *
 * - Mutex and RW lock: the signed 64-bit `int64Key(namespace, kind, name)`; a RW lock's read
 *   and write modes share the key (`_shared` vs exclusive), a mutex of the same name does not.
 * - Semaphore slot `i` of `maxCount`: `int64Key(namespace, 'semaphore', name) XOR i`, so the
 *   N slots of a semaphore are N distinct keys computed the same way in SQL (`#`) and here.
 * - Semaphore gate (head of line for weighted requests): the semaphore's key XOR 2^62, which
 *   no slot of up to 2^31-1 permits reaches.
 * - Semaphore wake-up channel: `lockkit_` + 26 base32 characters (130 bits) of the same
 *   digest, a valid unquoted identifier for LISTEN.
 *
 * Keys travel as decimal TEXT and are cast with `::bigint` on the server (a JS number would
 * lose precision above 2^53).
 */
export function advisoryKey(namespace: string, kind: LockKind, name: string): bigint {
  return int64Key(namespace, kind, name);
}

/** Key of a semaphore's slot `slot` (0-based). */
export function slotKey(semaphoreKey: bigint, slot: number): bigint {
  return BigInt.asIntN(64, semaphoreKey ^ BigInt(slot));
}

/** Key of a semaphore's gate (see the module comment). */
export function gateKey(semaphoreKey: bigint): bigint {
  return BigInt.asIntN(64, semaphoreKey ^ (1n << 62n));
}

/** LISTEN/NOTIFY channel on which a semaphore's releases are announced. */
export function releaseChannel(namespace: string, name: string): string {
  return `lockkit_${base32(nameDigest(namespace, 'semaphore', name)).slice(0, 26)}`;
}

/** The advisory key of a request, in the forms the backend uses. */
export interface RequestKey {
  /** The key (the semaphore's base key for semaphores). */
  readonly key: bigint;
  /** The key as decimal text (what the SQL casts with `::bigint`). */
  readonly text: string;
  /** The release channel (semaphores only, else ''). */
  readonly channel: string;
}

/** The key of a request (the backend memoises it with core's `memoizeKeys`). */
export function requestKey(request: LockRequest): RequestKey {
  const key = advisoryKey(request.namespace, request.kind, request.name);
  return {
    key,
    text: key.toString(),
    channel: request.kind === 'semaphore' ? releaseChannel(request.namespace, request.name) : '',
  };
}
