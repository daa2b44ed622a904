import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channelNames, InvalidArgumentError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { acquirerFor, type Fixture } from '../support.js';

const badOptions: readonly [string, unknown][] = [
  ['timeout -1', { timeout: -1 }],
  ['timeout NaN', { timeout: Number.NaN }],
  ['timeout 2^31', { timeout: 2 ** 31 }],
  ['timeout -Infinity', { timeout: Number.NEGATIVE_INFINITY }],
  ['timeout as a string', { timeout: '100' }],
  ['an unknown option (timeoutMs)', { timeoutMs: 100 }],
  ['a signal that is not an AbortSignal', { signal: 'stop' }],
  ['options that are not an object', 42],
];

/** Bad arguments are typed errors raised before any I/O. */
export function argumentCases(fx: Fixture): void {
  describe('arguments', () => {
    it.each(badOptions)(
      '%s → InvalidArgumentError (a RangeError) from every acquire method, before any work',
      async (_label, options) => {
        const provider = await fx.provider();
        const name = fx.name('bad-args');
        const events: unknown[] = [];
        const listener = (message: unknown): void => {
          events.push(message);
        };
        for (const channel of Object.values(channelNames)) subscribe(channel, listener);
        try {
          const calls: (() => Promise<unknown>)[] = [];
          for (const spec of [
            { kind: 'mutex', maxCount: 1 },
            { kind: 'read', maxCount: Number.POSITIVE_INFINITY },
            { kind: 'write', maxCount: 1 },
            { kind: 'semaphore', maxCount: 2 },
          ] as const) {
            const acquirer = acquirerFor(provider, name, spec);
            const bad = options as never;
            calls.push(
              () => acquirer.acquire(bad),
              () => acquirer.tryAcquire(bad),
              () => acquirer.run(() => 1, bad),
            );
          }
          for (const call of calls) {
            const error = await call().then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(error).toBeInstanceOf(RangeError);
            expect(InvalidArgumentError.isInstance(error)).toBe(true);
            expect((error as InvalidArgumentError).code).toBe('INVALID_ARGUMENT');
          }
        } finally {
          for (const channel of Object.values(channelNames)) unsubscribe(channel, listener);
        }
        expect(events).toEqual([]); // nothing started: no wait, grant or failure was published
        const free = await provider.createLock(name).tryAcquire();
        expect(free).not.toBeNull();
        await free?.release();
      },
    );

    it('maxCount 0, -1, 1.5, 2^31, NaN and "3" are rejected; names must be strings', async () => {
      const provider = await fx.provider();
      for (const maxCount of [0, -1, 1.5, 2 ** 31, Number.NaN, '3']) {
        expect(() => provider.createSemaphore(fx.name('bad-count'), maxCount as number)).toThrow(
          InvalidArgumentError,
        );
      }
      for (const name of [undefined, null, 42, {}, Symbol('x')]) {
        expect(() => provider.createLock(name as unknown as string)).toThrow(RangeError);
        expect(() => provider.createReadWriteLock(name as unknown as string)).toThrow(RangeError);
        expect(() => provider.createSemaphore(name as unknown as string, 1)).toThrow(RangeError);
      }
      expect(provider.createSemaphore(fx.name('max'), 2 ** 31 - 1).maxCount).toBe(2 ** 31 - 1);
    });

    it('timeout Infinity and 2^31-1 are accepted', async () => {
      const provider = await fx.provider();
      const lock = provider.createLock(fx.name('ok-args'));
      const first = await lock.acquire({ timeout: Number.POSITIVE_INFINITY });
      await first.release();
      const second = await lock.tryAcquire({ timeout: 2 ** 31 - 1 });
      expect(second).not.toBeNull();
      await second?.release();
    });

    it('a closed provider refuses new work with ProviderClosedError', async () => {
      const provider = await fx.provider();
      const lock = provider.createLock(fx.name('closed'));
      await provider.close();
      await expect(lock.acquire()).rejects.toMatchObject({ code: 'PROVIDER_CLOSED' });
      expect(() => provider.createLock('x')).toThrow(
        expect.objectContaining({ code: 'PROVIDER_CLOSED' }),
      );
    });

    it('close() ends waits with LockAbortedError and releases held handles', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const name = fx.name('close-waits');
      const held = await p1.createLock(name).acquire();
      const outcome = expect(p2.createLock(name).acquire()).rejects.toMatchObject({
        code: 'LOCK_ABORTED',
      });
      await p2.close();
      await outcome;
      await p1.close();
      expect(await held.release()).toBe(true);
      const p3 = await fx.provider();
      const again = await p3.createLock(name).tryAcquire();
      expect(again).not.toBeNull();
      await again?.release();
    });
  });
}
