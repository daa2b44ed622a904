import type { Capabilities } from './capabilities.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import type { AcquireOptions, LockKind, SemaphoreAcquireOptions } from './types.js';

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
  /** The caller's lease length; `undefined`: the backend's default. */
  readonly leaseMs?: number | undefined;
  /** The caller's `autoExtend`; `undefined`: the backend's default. */
  readonly autoExtend?: boolean | undefined;
  /** Semaphore permits to take at once. @defaultValue 1 */
  readonly permits?: number | undefined;
}

/**
 * What an acquire's lease and permit options are checked against. Without it (composite
 * acquires, transaction locks) only `timeout` and `signal` are accepted.
 */
export interface AcquireOptionTarget {
  readonly backend: string;
  readonly capabilities: Capabilities;
  readonly kind: LockKind;
  readonly maxCount: number;
}

const tryDefaults: ValidAcquireOptions = Object.freeze({ timeoutMs: 0, signal: undefined });
const waitDefaults: ValidAcquireOptions = Object.freeze({
  timeoutMs: Number.POSITIVE_INFINITY,
  signal: undefined,
});

/** Validates acquire options; rejects unknown keys (a typo like `timeoutMs` would otherwise wait forever). */
export function validateAcquireOptions(
  options: AcquireOptions | SemaphoreAcquireOptions | undefined,
  defaultTimeoutMs: number,
  target?: AcquireOptionTarget,
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
  let extra = false;
  for (const key of Object.keys(options)) {
    if (acquireOptionKeys.has(key)) continue;
    const known = target ? optionKeysOf(target.kind) : 'timeout, signal';
    if (!known.split(', ').includes(key)) {
      throw new InvalidArgumentError(`Unknown acquire option "${key}" (known options: ${known})`);
    }
    extra = true;
  }
  const timeoutMs =
    options.timeout === undefined ? defaultTimeoutMs : validateTimeout(options.timeout);
  const signal = validateSignal(options.signal);
  if (!extra || !target) return { timeoutMs, signal };
  const permits = (options as SemaphoreAcquireOptions).permits;
  return {
    timeoutMs,
    signal,
    leaseMs: options.leaseMs === undefined ? undefined : validateLeaseMs(options.leaseMs, target),
    autoExtend: validateAutoExtend(options.autoExtend, target),
    permits: permits === undefined ? 1 : validatePermits(permits, target),
  };
}

function optionKeysOf(kind: LockKind): string {
  const keys = 'timeout, signal, leaseMs, autoExtend';
  return kind === 'semaphore' ? `${keys}, permits` : keys;
}

/** The lease options and `handle.extend()` need a backend whose lease is chosen per hold. */
export function assertLeaseControl(
  option: string,
  target: Pick<AcquireOptionTarget, 'backend' | 'capabilities'>,
): void {
  if (Number.isFinite(target.capabilities.minLeaseMs)) return;
  const why = target.capabilities.leases
    ? 'its lease length is fixed by the provider'
    : 'a hold lasts as long as its session, not a lease';
  throw new InvalidArgumentError(
    `${option} needs a backend whose lease is chosen per hold, and capabilities.minLeaseMs is Infinity on "${target.backend}" (${why})`,
  );
}

/**
 * Validates a lease length (acquire option `leaseMs`, `handle.extend(ms)`): an integer from
 * the backend's `capabilities.minLeaseMs` to 2^31-1, on a backend that has one.
 */
export function validateLeaseMs(
  leaseMs: unknown,
  target: Pick<AcquireOptionTarget, 'backend' | 'capabilities'>,
  option = 'leaseMs',
): number {
  assertLeaseControl(option, target);
  const min = target.capabilities.minLeaseMs;
  if (
    typeof leaseMs !== 'number' ||
    !Number.isInteger(leaseMs) ||
    leaseMs < min ||
    leaseMs > MAX_TIMEOUT_MS
  ) {
    throw new InvalidArgumentError(
      `${option} must be an integer number of ms from ${min} to ${MAX_TIMEOUT_MS} on "${target.backend}", got ${describe(leaseMs)}`,
    );
  }
  return leaseMs;
}

function validateAutoExtend(value: unknown, target: AcquireOptionTarget): boolean | undefined {
  if (value === undefined) return undefined;
  assertLeaseControl('autoExtend', target);
  if (typeof value !== 'boolean') {
    throw new InvalidArgumentError(`autoExtend must be true or false, got ${describe(value)}`);
  }
  return value;
}

function validatePermits(permits: unknown, target: AcquireOptionTarget): number {
  const { maxCount } = target;
  if (
    typeof permits !== 'number' ||
    !Number.isInteger(permits) ||
    permits < 1 ||
    permits > maxCount
  ) {
    throw new InvalidArgumentError(
      `permits must be an integer from 1 to the semaphore's maxCount (${maxCount}), got ${describe(permits)}`,
    );
  }
  if (permits > 1 && !target.capabilities.weightedPermits) {
    throw new InvalidArgumentError(
      `permits above 1 need capabilities.weightedPermits, which is false on "${target.backend}"`,
    );
  }
  return permits;
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
