import { isLockError, LockError, type LockErrorOptions } from './lock-error.js';

/** Options of {@link BackendUnavailableError}. */
export interface BackendUnavailableErrorOptions extends LockErrorOptions {
  /**
   * Whether trying again may help: `true` (the default) for an outage (refused, reset, timed
   * out, no quorum), which a waiting acquire rides through until its deadline; `false` for a
   * failure that stays until someone changes the setup (wrong password or ACL user, unknown
   * database, a missing fencing sequence, a corrupt lock record), which fails every call at
   * once.
   */
  readonly retryable?: boolean | undefined;
}

/**
 * The backend could not be reached or answered with an error, so the operation's outcome is
 * unknown to the caller (no lock is held as a result of it). Code `BACKEND_UNAVAILABLE`;
 * `cause` is the client library's error; `retryable` says whether waiting may help.
 */
export class BackendUnavailableError extends LockError {
  readonly retryable: boolean;

  constructor(message: string, options: BackendUnavailableErrorOptions = {}) {
    super('BACKEND_UNAVAILABLE', message, options);
    this.name = 'BackendUnavailableError';
    this.retryable = options.retryable ?? true;
  }

  static override isInstance(value: unknown): value is BackendUnavailableError {
    return isLockError(value, 'BACKEND_UNAVAILABLE');
  }

  /** An outage a waiting acquire rides through (a `BackendUnavailableError` not marked otherwise). */
  static isRetryable(value: unknown): value is BackendUnavailableError {
    return (
      isLockError(value, 'BACKEND_UNAVAILABLE') &&
      (value as { retryable?: unknown }).retryable !== false
    );
  }
}
