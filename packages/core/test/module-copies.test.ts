// The ESM build (dist/) and the CommonJS build (dist/cjs/) are two copies of core; an app can
// load both (an ESM dependency next to a CommonJS one). Errors from one copy must still be
// recognised by the other's classes: instanceof, isInstance and code.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type * as Core from '../src/index.js';

// The built copies (the test task runs after the build); typed from the source.
type Copy = typeof Core;
const esm = (await import(new URL('../dist/index.js', import.meta.url).href)) as Copy;
const cjs = createRequire(import.meta.url)('../dist/cjs/index.js') as Copy;

const makers: ReadonlyArray<readonly [keyof Copy, (copy: Copy) => Error & { code: string }]> = [
  ['LockTimeoutError', (c) => new c.LockTimeoutError('a', 10)],
  ['LockLostError', (c) => new c.LockLostError('a', 'gone')],
  ['LockAbortedError', (c) => new c.LockAbortedError('a', 'closed')],
  ['LockDeadlockError', (c) => new c.LockDeadlockError('a')],
  ['ProviderClosedError', (c) => new c.ProviderClosedError('memory')],
  ['BackendUnavailableError', (c) => new c.BackendUnavailableError('down')],
  ['InvalidArgumentError', (c) => new c.InvalidArgumentError('bad')],
];
const classOf = (copy: Copy, name: keyof Copy) => copy[name] as unknown as abstract new () => Error;

describe('errors across the ESM and CommonJS copies of core', () => {
  it('loads two distinct copies', () => {
    expect(cjs.LockError).not.toBe(esm.LockError);
    expect(Object.getPrototypeOf(new cjs.LockTimeoutError('a', 1))).not.toBe(
      esm.LockTimeoutError.prototype,
    );
  });

  for (const [from, to] of [
    [cjs, esm],
    [esm, cjs],
  ] as const) {
    const direction = from === cjs ? 'CommonJS → ESM' : 'ESM → CommonJS';
    it.each(makers)(`${direction}: %s matches its own class only`, (name, make) => {
      const error = make(from);
      for (const [other] of makers) {
        expect(error instanceof classOf(to, other), `${name} instanceof ${other}`).toBe(
          other === name,
        );
      }
      const type = to[name] as unknown as { isInstance(value: unknown): boolean };
      expect(type.isInstance(error)).toBe(true);
      expect(to.isLockError(error, error.code as Core.LockErrorCode)).toBe(true);
      expect(error instanceof Error).toBe(true);
    });

    it(`${direction}: LockError matches every error but InvalidArgumentError`, () => {
      for (const [name, make] of makers) {
        expect(make(from) instanceof to.LockError).toBe(name !== 'InvalidArgumentError');
      }
      expect(new from.InvalidArgumentError('bad') instanceof RangeError).toBe(true);
    });
  }

  it('leaves unbranded look-alikes and your own subclasses to the prototype chain', () => {
    const lookAlike = Object.assign(new Error('x'), { code: 'LOCK_TIMEOUT' });
    expect(lookAlike instanceof esm.LockTimeoutError).toBe(false);
    expect(lookAlike instanceof esm.LockError).toBe(false);
    class OrderLocked extends esm.LockTimeoutError {}
    expect(new cjs.LockTimeoutError('a', 1) instanceof OrderLocked).toBe(false);
    expect(new esm.LockTimeoutError('a', 1) instanceof OrderLocked).toBe(false);
    expect(new OrderLocked('a', 1) instanceof OrderLocked).toBe(true);
    expect(new OrderLocked('a', 1) instanceof cjs.LockTimeoutError).toBe(true);
  });
});
