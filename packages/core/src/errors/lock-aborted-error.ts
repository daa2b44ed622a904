import { isLockError, LockError } from './lock-error.js';

/**
 * A wait for a lock ended because its provider was closed. (A wait aborted by the caller's
 * own `signal` rejects with that signal's `reason` instead.) Code `LOCK_ABORTED`.
 */
export class LockAbortedError extends LockError {
  constructor(lockName: string, reason: string) {
    super('LOCK_ABORTED', `Wait for lock "${lockName}" was aborted: ${reason}`, { lockName });
    this.name = 'LockAbortedError';
  }

  static override isInstance(value: unknown): value is LockAbortedError {
    return isLockError(value, 'LOCK_ABORTED');
  }
}
