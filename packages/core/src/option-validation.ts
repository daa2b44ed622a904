import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { describe, MAX_TIMEOUT_MS } from './validation.js';

/**
 * Checks for provider options, so every backend's factory rejects bad options the same way
 * (an `InvalidArgumentError` before any I/O, naming the option) — one place for the policy.
 */

/** `options` must be an object whose keys are all in `known`; `what` names the provider. */
export function checkOptionKeys(options: unknown, known: readonly string[], what: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`${what} options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(
        `Unknown ${what} option "${key}" (known options: ${known.join(', ')})`,
      );
    }
  }
}

/** Range and default of a numeric option. */
export interface NumberOptionRule {
  readonly default: number;
  readonly min: number;
  /** @defaultValue 2^31-1 (the largest timer delay) */
  readonly max?: number;
  /** @defaultValue true */
  readonly integer?: boolean;
}

/** A number option: `undefined` gives the default; anything else must lie in [min, max]. */
export function numberOption(name: string, value: unknown, rule: NumberOptionRule): number {
  if (value === undefined) return rule.default;
  const { min, max = MAX_TIMEOUT_MS, integer = true } = rule;
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    const kind = integer ? 'an integer' : 'a number';
    throw new InvalidArgumentError(
      `${name} must be ${kind} from ${min} to ${max}, got ${describe(value)}`,
    );
  }
  return value;
}

/** A boolean option. */
export function booleanOption(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new InvalidArgumentError(`${name} must be true or false, got ${describe(value)}`);
  }
  return value;
}

/** A string option. */
export function stringOption(name: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') {
    throw new InvalidArgumentError(`${name} must be a string, got ${describe(value)}`);
  }
  return value;
}
