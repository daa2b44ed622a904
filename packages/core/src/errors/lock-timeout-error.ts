import { isLockError, LockError } from './lock-error.js';

/**
 * `acquire()` gave up: the lock was not granted within `timeout` ms. Code `LOCK_TIMEOUT`.
 * `cause`, when set, says why the last attempt could not be decided (e.g. a Redlock quorum
 * that could not be reached); without one, the lock was held by someone else.
 */
export class LockTimeoutError extends LockError {
  readonly timeoutMs: number;

  constructor(lockName: string, timeoutMs: number, options: { readonly cause?: unknown } = {}) {
    super('LOCK_TIMEOUT', `Timed out after ${timeoutMs} ms waiting for lock "${lockName}"`, {
      lockName,
      cause: options.cause,
    });
    this.name = 'LockTimeoutError';
    this.timeoutMs = timeoutMs;
  }

  static override isInstance(value: unknown): value is LockTimeoutError {
    return isLockError(value, 'LOCK_TIMEOUT');
  }
}
