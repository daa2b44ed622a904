import { isLockError, LockError, type LockErrorOptions } from './lock-error.js';

/**
 * The backend could not be reached or answered with an error, so the operation's outcome is
 * unknown to the caller (no lock is held as a result of it). Code `BACKEND_UNAVAILABLE`;
 * `cause` is the client library's error.
 */
export class BackendUnavailableError extends LockError {
  constructor(message: string, options: LockErrorOptions = {}) {
    super('BACKEND_UNAVAILABLE', message, options);
    this.name = 'BackendUnavailableError';
  }

  static override isInstance(value: unknown): value is BackendUnavailableError {
    return isLockError(value, 'BACKEND_UNAVAILABLE');
  }
}
