const brand: unique symbol = Symbol.for('lockkit.error');

/** Stable error codes. They never change meaning between major versions. */
export type LockErrorCode =
  | 'LOCK_TIMEOUT'
  | 'LOCK_LOST'
  | 'LOCK_ABORTED'
  | 'LOCK_DEADLOCK'
  | 'PROVIDER_CLOSED'
  | 'BACKEND_UNAVAILABLE'
  | 'INVALID_ARGUMENT';

/** Fields every lockkit error carries. */
export interface LockErrorFields {
  readonly code: LockErrorCode;
  /** Lock name the error is about, when there is one. */
  readonly lockName?: string | undefined;
}

/** Marks an error object as a lockkit error so `isInstance` works across copies of core. */
export function brandError(error: Error): void {
  Object.defineProperty(error, brand, { value: true, enumerable: false });
}

/** True if `value` is a lockkit error from any copy of `@lockkit/core` (optionally with `code`). */
export function isLockError(
  value: unknown,
  code?: LockErrorCode,
): value is Error & LockErrorFields {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as { [brand]?: unknown })[brand] !== true) return false;
  return code === undefined || (value as { code?: unknown }).code === code;
}

/** Options accepted by every lockkit error constructor. */
export interface LockErrorOptions {
  readonly lockName?: string | undefined;
  readonly cause?: unknown;
}

/**
 * Base class of every lockkit error. `code` is stable; `cause` keeps the underlying error.
 * Use `LockError.isInstance(e)` (or the subclass's) rather than `instanceof` when several
 * copies of `@lockkit/core` may be installed.
 */
export class LockError extends Error implements LockErrorFields {
  readonly code: LockErrorCode;
  readonly lockName: string | undefined;

  constructor(code: LockErrorCode, message: string, options: LockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LockError';
    this.code = code;
    this.lockName = options.lockName;
    brandError(this);
  }

  static isInstance(value: unknown): value is LockError {
    return isLockError(value);
  }
}
