import { InvalidArgumentError, type LockHandle, LockLostError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { abortedWithin, type Fixture, titled } from '../support.js';

/**
 * Per-acquire lease control (`leaseMs`, `autoExtend`, `handle.extend(ms)`, `validUntil`) where
 * `capabilities.minLeaseMs` is finite; elsewhere, that all of it is refused before any I/O.
 */
export function leaseControlCases(fx: Fixture, minLeaseMs: number, leases: boolean): void {
  const control = Number.isFinite(minLeaseMs);
  const skip = control ? undefined : 'capabilities.minLeaseMs is Infinity';
  /** A short lease this backend accepts (at least 300 ms × timeScale). */
  const shortLeaseMs = Math.ceil(Math.max(minLeaseMs, fx.ms(300)));

  describe('lease control', () => {
    it.runIf(control)(
      titled('autoExtend: false with leaseMs: the hold ends when its lease runs out', skip),
      async () => {
        const [p1, p2] = [await fx.provider(), await fx.provider()];
        const name = fx.name('fixed-lease');
        const options = { leaseMs: shortLeaseMs, autoExtend: false, timeout: fx.ms(5000) };
        const before = Date.now();
        const held: LockHandle[] = [
          await p1.createLock(name).acquire(options),
          await p1.createReadWriteLock(name).acquireWrite(options),
          await p1.createSemaphore(name, 1).acquire(options),
        ];
        const after = Date.now();
        for (const handle of held) {
          expect(handle.validUntil).toBeGreaterThan(before + shortLeaseMs * 0.95);
          expect(handle.validUntil).toBeLessThanOrEqual(after + shortLeaseMs + 2);
        }
        expect(await p2.createLock(name).tryAcquire()).toBeNull();
        const bound = shortLeaseMs + fx.ms(500);
        for (const handle of held) {
          const reason = await abortedWithin(handle.signal, bound);
          expect(LockLostError.isInstance(reason)).toBe(true);
          expect(Date.now()).toBeGreaterThanOrEqual(before + shortLeaseMs * 0.95);
          expect(handle.validUntil).toBe(0);
        }
        // Free for others without anyone releasing it; the late releases report the loss.
        const next = [
          await p2.createLock(name).acquire({ timeout: fx.ms(2000) }),
          await p2.createReadWriteLock(name).acquireWrite({ timeout: fx.ms(2000) }),
          await p2.createSemaphore(name, 1).acquire({ timeout: fx.ms(2000) }),
        ];
        for (const [index, handle] of held.entries()) {
          expect(next[index]!.fencingToken).toBeGreaterThan(handle.fencingToken);
          expect(await handle.release()).toBe(false);
        }
        for (const handle of next) expect(await handle.release()).toBe(true);
      },
      30_000,
    );

    it.runIf(control)(
      titled('extend(ms) keeps a fixed lease held and exclusive past its first end', skip),
      async () => {
        const [p1, p2] = [await fx.provider(), await fx.provider()];
        const name = fx.name('extend');
        const lock = p1.createLock(name);
        const handle = await lock.acquire({ leaseMs: shortLeaseMs, autoExtend: false });
        const firstEnd = handle.validUntil;
        expect(await handle.extend(3 * shortLeaseMs)).toBe(true);
        expect(handle.validUntil).toBeGreaterThan(firstEnd + shortLeaseMs);
        await new Promise((resolve) => setTimeout(resolve, firstEnd - Date.now() + fx.ms(100)));
        expect(handle.signal.aborted).toBe(false);
        expect(await p2.createLock(name).tryAcquire()).toBeNull();
        expect(await handle.extend()).toBe(true); // the length now in force
        expect(await handle.release()).toBe(true);
        expect(await handle.extend()).toBe(false); // released: nothing to extend
      },
      30_000,
    );

    it.runIf(control)(
      titled('bad lease lengths are InvalidArgumentErrors before any I/O', skip),
      async () => {
        const provider = await fx.provider();
        const lock = provider.createLock(fx.name('bad-lease'));
        for (const bad of [minLeaseMs - 1, minLeaseMs + 0.5, 2 ** 31, Number.NaN, '1000']) {
          const error = await lock.acquire({ leaseMs: bad as number }).catch((e: unknown) => e);
          expect(InvalidArgumentError.isInstance(error), String(bad)).toBe(true);
        }
        const error = await lock.tryAcquire({ autoExtend: 'no' as never }).catch((e) => e);
        expect(InvalidArgumentError.isInstance(error)).toBe(true);
        const handle = await lock.acquire({ leaseMs: shortLeaseMs });
        await expect(handle.extend(minLeaseMs - 1)).rejects.toBeInstanceOf(InvalidArgumentError);
        expect(handle.signal.aborted).toBe(false);
        expect(await handle.release()).toBe(true);
      },
    );

    it.runIf(!control)(
      'leaseMs, autoExtend and extend() are refused, naming capabilities.minLeaseMs',
      async () => {
        const provider = await fx.provider();
        const name = fx.name('no-lease-control');
        const lock = provider.createLock(name);
        for (const options of [{ leaseMs: 60_000 }, { autoExtend: false }, { autoExtend: true }]) {
          const error = await lock.tryAcquire(options).catch((e: unknown) => e);
          expect(InvalidArgumentError.isInstance(error)).toBe(true);
          expect((error as Error).message).toMatch(/capabilities\.minLeaseMs/);
        }
        const before = Date.now();
        const handle = await lock.acquire();
        if (leases) expect(handle.validUntil).toBeGreaterThan(before);
        else expect(handle.validUntil).toBe(Number.POSITIVE_INFINITY);
        await expect(handle.extend()).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(handle.extend(60_000)).rejects.toBeInstanceOf(InvalidArgumentError);
        expect(handle.signal.aborted).toBe(false);
        expect(await handle.release()).toBe(true);
        expect(handle.validUntil).toBe(0);
      },
    );
  });
}
