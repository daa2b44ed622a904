import { type LockRequest, memoizeKeys, readableKey } from '@lockkit/core/backend';

/** `GET_LOCK` names are at most 64 characters (MySQL counts characters, MariaDB bytes). */
export const MAX_LOCK_NAME_LENGTH = 64;
/** Room left after a base for the longest suffix: `.s` + a 10-digit slot index. */
const SUFFIX_ROOM = 12;

/**
 * The server-side names of one lock, version 1 (golden-tested). All are lower-case ASCII
 * `[a-z0-9_.-]`, so they mean the same on case-insensitive MySQL and case-sensitive MariaDB;
 * the hash inside comes from the original (case-sensitive) name and namespace.
 */
export interface LockKeys {
  /** Row of the fencing counter; also the mutex's `GET_LOCK` name. */
  readonly base: string;
  /** RW: the gate every reader passes and a writer holds. */
  readonly gate: string;
  /** Semaphore / RW readers: the lock a head waiter holds while it waits for a free slot. */
  readonly queue: string;
  /** Semaphore permit `i` / RW reader slot `i`. */
  slot(index: number): string;
}

/** The mutex key: `readableKey(namespace, 'mutex', name, { maxLength: 64, lowercase: true })`. */
export function mutexKey(namespace: string, name: string): string {
  return readableKey(namespace, 'mutex', name, {
    maxLength: MAX_LOCK_NAME_LENGTH,
    lowercase: true,
  });
}

/** The base of a RW lock or semaphore, short enough for every suffix. */
export function compositeBase(namespace: string, kind: 'read' | 'semaphore', name: string): string {
  return readableKey(namespace, kind, name, {
    maxLength: MAX_LOCK_NAME_LENGTH - SUFFIX_ROOM,
    lowercase: true,
  });
}

/** Every server-side name a request touches (memoised for the names in use). */
export const lockKeys: (request: LockRequest) => LockKeys = memoizeKeys(computeKeys);

function computeKeys(request: LockRequest): LockKeys {
  if (request.kind === 'mutex') {
    const base = mutexKey(request.namespace, request.name);
    return { base, gate: base, queue: base, slot: () => base };
  }
  const family = request.kind === 'semaphore' ? 'semaphore' : 'read';
  const base = compositeBase(request.namespace, family, request.name);
  const slotPrefix = family === 'semaphore' ? `${base}.s` : `${base}.r`;
  return {
    base,
    gate: `${base}.w`,
    queue: `${base}.q`,
    slot: (index) => slotPrefix + index,
  };
}
