import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import type { AcquireOptions } from './types.js';

/** Largest finite timeout (what `setTimeout` can represent). */
export const MAX_TIMEOUT_MS: number = 2 ** 31 - 1;
/** Largest semaphore `maxCount`. */
export const MAX_COUNT: number = 2 ** 31 - 1;

const acquireOptionKeys = new Set(['timeout', 'signal']);

/** Validates a lock name: any string (including '' and NUL) is valid; nothing else is. */
export function validateName(name: unknown): string {
  if (typeof name !== 'string') {
    throw new InvalidArgumentError(`Lock name must be a string, got ${describe(name)}`);
  }
  return name;
}

/** Validates a semaphore's maxCount: an integer in [1, 2^31-1]. */
export function validateMaxCount(maxCount: unknown): number {
  if (
    typeof maxCount !== 'number' ||
    !Number.isInteger(maxCount) ||
    maxCount < 1 ||
    maxCount > MAX_COUNT
  ) {
    throw new InvalidArgumentError(
      `Semaphore maxCount must be an integer from 1 to ${MAX_COUNT}, got ${describe(maxCount)}`,
    );
  }
  return maxCount;
}

/** Validates a timeout in ms: `Infinity` or a number in [0, 2^31-1]. */
export function validateTimeout(timeout: unknown): number {
  if (timeout === Number.POSITIVE_INFINITY) return timeout;
  if (
    typeof timeout !== 'number' ||
    Number.isNaN(timeout) ||
    timeout < 0 ||
    timeout > MAX_TIMEOUT_MS
  ) {
    throw new InvalidArgumentError(
      `timeout must be Infinity or a number of ms from 0 to ${MAX_TIMEOUT_MS}, got ${describe(timeout)}`,
    );
  }
  return timeout;
}

/** Acquire options after validation. */
export interface ValidAcquireOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** Validates acquire options; rejects unknown keys (a typo like `timeoutMs` would otherwise wait forever). */
const tryDefaults: ValidAcquireOptions = Object.freeze({ timeoutMs: 0, signal: undefined });
const waitDefaults: ValidAcquireOptions = Object.freeze({
  timeoutMs: Number.POSITIVE_INFINITY,
  signal: undefined,
});

export function validateAcquireOptions(
  options: AcquireOptions | undefined,
  defaultTimeoutMs: number,
): ValidAcquireOptions {
  if (options === undefined) {
    return defaultTimeoutMs === 0
      ? tryDefaults
      : defaultTimeoutMs === Infinity
        ? waitDefaults
        : { timeoutMs: defaultTimeoutMs, signal: undefined };
  }
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`Acquire options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!acquireOptionKeys.has(key)) {
      throw new InvalidArgumentError(
        `Unknown acquire option "${key}" (known options: timeout, signal)`,
      );
    }
  }
  const timeoutMs =
    options.timeout === undefined ? defaultTimeoutMs : validateTimeout(options.timeout);
  return { timeoutMs, signal: validateSignal(options.signal) };
}

/** Validates an optional `signal` option: `undefined` or an AbortSignal. */
export function validateSignal(signal: unknown): AbortSignal | undefined {
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new InvalidArgumentError(`signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return signal;
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function'
  );
}

/** Short description of a value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  if (typeof value === 'function') return 'a function';
  return Array.isArray(value) ? 'an array' : `an ${typeof value}`;
}
