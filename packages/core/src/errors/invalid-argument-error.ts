import { brandError, brandedInstanceOf, isLockError, type LockErrorCode } from './lock-error.js';

/**
 * A bad argument (timeout out of range, maxCount not a positive integer, a name that is not
 * a string, an unknown option). Thrown or rejected before any I/O. It is a `RangeError`, so
 * `instanceof RangeError` holds, and it carries code `INVALID_ARGUMENT`.
 */
export class InvalidArgumentError extends RangeError {
  readonly code: LockErrorCode = 'INVALID_ARGUMENT';
  readonly lockName: string | undefined = undefined;

  constructor(message: string) {
    super(message);
    this.name = 'InvalidArgumentError';
    brandError(this);
  }

  static isInstance(value: unknown): value is InvalidArgumentError {
    return isLockError(value, 'INVALID_ARGUMENT');
  }

  /** `instanceof` that also matches an `InvalidArgumentError` from another copy of core. */
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
