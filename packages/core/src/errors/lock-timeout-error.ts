import { isLockError, LockError } from './lock-error.js';

/** `acquire()` gave up: the lock was not granted within `timeout` ms. Code `LOCK_TIMEOUT`. */
export class LockTimeoutError extends LockError {
  readonly timeoutMs: number;

  constructor(lockName: string, timeoutMs: number) {
    super('LOCK_TIMEOUT', `Timed out after ${timeoutMs} ms waiting for lock "${lockName}"`, {
      lockName,
    });
    this.name = 'LockTimeoutError';
    this.timeoutMs = timeoutMs;
  }

  static override isInstance(value: unknown): value is LockTimeoutError {
    return isLockError(value, 'LOCK_TIMEOUT');
  }
}
