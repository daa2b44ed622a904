import { isLockError, LockError } from './lock-error.js';

/**
 * The reason a handle's `signal` aborts: the backend can no longer vouch for the lock
 * (lease not extended in time, session or connection gone, key or node removed by someone
 * else). Code `LOCK_LOST`. `cause` holds the underlying failure when there is one.
 */
export class LockLostError extends LockError {
  constructor(lockName: string, reason: string, cause?: unknown) {
    super('LOCK_LOST', `Lock "${lockName}" was lost: ${reason}`, { lockName, cause });
    this.name = 'LockLostError';
  }

  static override isInstance(value: unknown): value is LockLostError {
    return isLockError(value, 'LOCK_LOST');
  }
}
