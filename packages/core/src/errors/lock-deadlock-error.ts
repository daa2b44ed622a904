import { isLockError, LockError } from './lock-error.js';

/** The server detected a deadlock involving this acquire. Code `LOCK_DEADLOCK`. */
export class LockDeadlockError extends LockError {
  constructor(lockName: string, cause?: unknown) {
    super('LOCK_DEADLOCK', `Deadlock detected while acquiring lock "${lockName}"`, {
      lockName,
      cause,
    });
    this.name = 'LockDeadlockError';
  }

  static override isInstance(value: unknown): value is LockDeadlockError {
    return isLockError(value, 'LOCK_DEADLOCK');
  }
}
