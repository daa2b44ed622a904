import { describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  InvalidArgumentError,
  isLockError,
  LockAbortedError,
  LockDeadlockError,
  LockError,
  LockLostError,
  LockTimeoutError,
  ProviderClosedError,
} from '../src/index.js';

describe('errors', () => {
  const cause = new Error('socket closed');
  const cases = [
    [new LockTimeoutError('a', 200), 'LOCK_TIMEOUT', LockTimeoutError],
    [new LockLostError('a', 'lease ran out', cause), 'LOCK_LOST', LockLostError],
    [new LockAbortedError('a', 'closed'), 'LOCK_ABORTED', LockAbortedError],
    [new LockDeadlockError('a', cause), 'LOCK_DEADLOCK', LockDeadlockError],
    [new ProviderClosedError('redis'), 'PROVIDER_CLOSED', ProviderClosedError],
    [
      new BackendUnavailableError('down', { cause }),
      'BACKEND_UNAVAILABLE',
      BackendUnavailableError,
    ],
    [new InvalidArgumentError('bad'), 'INVALID_ARGUMENT', InvalidArgumentError],
  ] as const;

  it.each(cases)('%s has a stable code, a name, and isInstance', (error, code, type) => {
    expect(error.code).toBe(code);
    expect(error.name).toBe(type.name);
    expect(type.isInstance(error)).toBe(true);
    expect(isLockError(error, code)).toBe(true);
    expect(error.message.length).toBeGreaterThan(0);
  });

  it('keeps the cause', () => {
    expect(new LockLostError('a', 'x', cause).cause).toBe(cause);
    expect(new BackendUnavailableError('down', { cause }).cause).toBe(cause);
  });

  it('isInstance works across copies of core (brand, not prototype)', () => {
    const foreign = Object.assign(new Error('from another copy'), { code: 'LOCK_TIMEOUT' });
    Object.defineProperty(foreign, Symbol.for('lockkit.error'), { value: true });
    expect(LockTimeoutError.isInstance(foreign)).toBe(true);
    expect(LockError.isInstance(foreign)).toBe(true);
    expect(LockLostError.isInstance(foreign)).toBe(false);
    expect(LockError.isInstance(new Error('plain'))).toBe(false);
    expect(LockError.isInstance(null)).toBe(false);
  });

  it('InvalidArgumentError is a RangeError', () => {
    expect(new InvalidArgumentError('x')).toBeInstanceOf(RangeError);
  });
});

describe('provider option checks', () => {
  it('reject non-objects and unknown keys, naming them', async () => {
    const { checkOptionKeys } = await import('../src/for-backends.js');
    expect(() => checkOptionKeys(null, ['a'], 'Redis')).toThrow(/Redis options must be an object/);
    expect(() => checkOptionKeys({ b: 1 }, ['a'], 'Redis')).toThrow(/Unknown Redis option "b"/);
    expect(() => checkOptionKeys({ a: 1 }, ['a'], 'Redis')).not.toThrow();
  });

  it('numbers: default, range, integer', async () => {
    const { numberOption } = await import('../src/for-backends.js');
    expect(numberOption('leaseMs', undefined, { default: 30_000, min: 100 })).toBe(30_000);
    expect(numberOption('leaseMs', 500, { default: 30_000, min: 100 })).toBe(500);
    for (const bad of [99, 1.5, Number.NaN, '500', 2 ** 31]) {
      expect(() => numberOption('leaseMs', bad, { default: 30_000, min: 100 })).toThrow(
        InvalidArgumentError,
      );
    }
    expect(numberOption('ratio', 0.5, { default: 1, min: 0, max: 1, integer: false })).toBe(0.5);
  });

  it('booleans and strings', async () => {
    const { booleanOption, stringOption } = await import('../src/for-backends.js');
    expect(booleanOption('autoExtend', undefined, true)).toBe(true);
    expect(() => booleanOption('autoExtend', 'yes', true)).toThrow(
      /autoExtend must be true or false/,
    );
    expect(stringOption('namespace', undefined, '')).toBe('');
    expect(() => stringOption('namespace', 1, '')).toThrow(/namespace must be a string/);
  });
});
