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

  /**
   * Makes `instanceof` work across copies of `@lockkit/core` (its ESM and CommonJS builds
   * loaded side by side, or two installed versions): an error from another copy is an
   * instance of this class or subclass when its `isInstance` says so (brand and `code`).
   * Subclasses without their own `isInstance` (your own) keep plain prototype checks.
   */
  static override [Symbol.hasInstance]<T>(
    this: new (
      ...args: never[]
    ) => T,
    value: unknown,
  ): value is T {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class (or subclass) on the right of instanceof
    return brandedInstanceOf(this, value);
  }
}

/** `instanceof` for lockkit error classes: the prototype chain, else brand and `code`. */
export function brandedInstanceOf(type: Function, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(type, value)) return true;
  if (!Object.hasOwn(type, 'isInstance')) return false;
  const isInstance = (type as { isInstance?: unknown }).isInstance;
  if (typeof isInstance !== 'function' || isInstance.call(type, value) !== true) return false;
  // InvalidArgumentError is a RangeError, not a LockError, in every copy.
  return type !== LockError || (value as LockErrorFields).code !== 'INVALID_ARGUMENT';
}
