import type { LockKind } from '@lockkit/core';
import { readableKey } from '@lockkit/core/backend';

/** Every key lockkit writes starts with this (after the client's own `keyPrefix`, if any). */
export const KEY_ROOT = 'lockkit:';

/**
 * The Redis keys of one lock. All share the hash tag `{<family>.<readable>.<hash>}`, so one
 * lock's keys live in one Cluster slot and a script may touch them together.
 */
export interface RedisLockKeys {
  /** `lockkit:{tag}` — the mutex or writer token (string), or the semaphore's holder set. */
  readonly lock: string;
  /** `lockkit:{tag}:readers` — RW lock: readers, scored by lease expiry (server ms). */
  readonly readers: string;
  /** `lockkit:{tag}:writers-waiting` — RW lock: waiting writers' markers, scored by expiry. */
  readonly writersWaiting: string;
  /** `lockkit:{tag}:waiters` — mutex, semaphore: providers waiting, scored by registration expiry. */
  readonly waiters: string;
  /** `lockkit:{tag}:reservations` — semaphore: waiting weighted requests' ids, scored by expiry. */
  readonly reservations: string;
  /**
   * `lockkit:{tag}:holds` — a hash, hold token → `<fencing token>:<since ms>:<owner>`, for
   * `inspect()`: written by the grant's script, removed by its release, expiring with the holds.
   */
  readonly holds: string;
  /** `lockkit:{tag}:fence` — the fencing counter: INCR on every grant, never deleted. */
  readonly fence: string;
  /**
   * `lockkit:{tag}:released` — pub/sub channel a release publishes on (not a key); a wake-up
   * for one provider goes to `lockkit:{tag}:released:<provider id>` instead.
   */
  readonly channel: string;
  /** `lockkit:{tag}:cancel:<token>` — marks an attempt the client gave up on. */
  cancel(token: string): string;
}

/**
 * Maps (namespace, kind, name) to keys with core's versioned `readableKey` (a readable
 * prefix plus a SHA-256 of the original name). A RW lock's two modes share keys; a mutex,
 * a RW lock and a semaphore of the same name never do.
 */
export function redisLockKeys(namespace: string, kind: LockKind, name: string): RedisLockKeys {
  const base = `${KEY_ROOT}{${readableKey(namespace, kind, name, { maxLength: 200 })}}`;
  return {
    lock: base,
    readers: `${base}:readers`,
    writersWaiting: `${base}:writers-waiting`,
    waiters: `${base}:waiters`,
    reservations: `${base}:reservations`,
    holds: `${base}:holds`,
    fence: `${base}:fence`,
    channel: `${base}:released`,
    cancel: (token) => `${base}:cancel:${token}`,
  };
}
