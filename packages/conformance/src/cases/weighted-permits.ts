import { InvalidArgumentError, type LockHandle } from '@lockkit/core';
import { delay } from '@lockkit/core/backend';
import { describe, expect, it } from 'vitest';
import { type Fixture, nextWaitFor, titled } from '../support.js';

/**
 * `semaphore.acquire({ permits: n })`: checked before any I/O on every backend; where
 * `capabilities.weightedPermits`, all or nothing, released all at once, and a waiting request
 * is not overtaken by later, smaller ones (head-of-line).
 */
export function weightedPermitCases(fx: Fixture, weighted: boolean): void {
  const skip = weighted ? undefined : 'capabilities.weightedPermits is false';

  describe('weighted permits', () => {
    it('bad permit counts are InvalidArgumentErrors before any I/O; permits: 1 always works', async () => {
      const provider = await fx.provider();
      const name = fx.name('bad-permits');
      const semaphore = provider.createSemaphore(name, 3);
      const bad: unknown[] = [0, -1, 1.5, 4, Number.NaN, '2', Number.POSITIVE_INFINITY];
      if (!weighted) bad.push(2);
      for (const permits of bad) {
        const error = await semaphore.tryAcquire({ permits: permits as number }).catch((e) => e);
        expect(InvalidArgumentError.isInstance(error), String(permits)).toBe(true);
      }
      if (!weighted) {
        const error = await semaphore.acquire({ permits: 2 }).catch((e: unknown) => e);
        expect((error as Error).message).toMatch(/capabilities\.weightedPermits/);
      }
      const lockError = await provider
        .createLock(name)
        .tryAcquire({ permits: 1 } as never)
        .catch((e: unknown) => e);
      expect(InvalidArgumentError.isInstance(lockError)).toBe(true); // a semaphore option only
      const one = await semaphore.acquire({ permits: 1, timeout: fx.ms(5000) });
      const others = [await semaphore.tryAcquire(), await semaphore.tryAcquire()];
      expect(others).not.toContain(null);
      expect(await semaphore.tryAcquire()).toBeNull();
      for (const handle of [one, ...others]) expect(await handle!.release()).toBe(true);
    });

    it.runIf(weighted)(
      titled(
        'all or nothing: a request for more permits than are free waits; release frees all',
        skip,
      ),
      async () => {
        const [p1, p2] = [await fx.provider(), await fx.provider()];
        const name = fx.name('weighted');
        const sem = (provider: typeof p1) => provider.createSemaphore(name, 5);
        const three = await sem(p1).acquire({ permits: 3, timeout: fx.ms(5000) });
        expect(await sem(p2).tryAcquire({ permits: 3 })).toBeNull(); // 2 free: none taken
        const two = await sem(p2).tryAcquire({ permits: 2 });
        expect(two).not.toBeNull();
        expect(await sem(p1).tryAcquire()).toBeNull();
        expect(await three.release()).toBe(true); // frees all three at once
        const again = await sem(p2).tryAcquire({ permits: 3, timeout: fx.ms(2000) });
        expect(again).not.toBeNull();
        expect(again!.fencingToken).toBeGreaterThan(three.fencingToken);
        for (const handle of [two!, again!]) expect(await handle.release()).toBe(true);
        const all = await sem(p1).tryAcquire({ permits: 5, timeout: fx.ms(2000) });
        expect(all).not.toBeNull();
        expect(await all!.release()).toBe(true);
      },
    );

    it.runIf(weighted)(
      titled('a waiting big request is not overtaken by later small ones (head of line)', skip),
      async () => {
        const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const name = fx.name('head-of-line');
        const sem = (provider: typeof p1) => provider.createSemaphore(name, 4);
        const small = await sem(p1).acquire({ permits: 2 });
        const waited = nextWaitFor(name);
        const order: string[] = [];
        const big = sem(p2)
          .acquire({ permits: 4, timeout: fx.ms(10_000) })
          .then((handle) => {
            order.push('big');
            return handle;
          });
        await waited;
        // Two permits are free, yet a later request for one must not pass the waiting four.
        expect(await sem(p3).tryAcquire()).toBeNull();
        const laterWaited = nextWaitFor(name);
        const later = sem(p3)
          .acquire({ timeout: fx.ms(10_000) })
          .then((handle) => {
            order.push('later');
            return handle;
          });
        await laterWaited;
        await delay(fx.ms(50)); // room for a wrong grant to show
        expect(order).toEqual([]);
        expect(await small.release()).toBe(true);
        const bigHandle = await big;
        expect(order).toEqual(['big']);
        expect(await bigHandle.release()).toBe(true);
        const laterHandle = await later;
        expect(order).toEqual(['big', 'later']);
        expect(await laterHandle.release()).toBe(true);
      },
      30_000,
    );

    it.runIf(weighted)(
      titled('a stream of one-permit requests does not starve a request for every permit', skip),
      async () => {
        const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const name = fx.name('no-starvation');
        const sem = (provider: typeof p1) => provider.createSemaphore(name, 3);
        // Three workers keep at least one permit held at all times (each re-acquires at once),
        // so a request for all three permits never finds them free unless later requests
        // yield to it.
        let stop = false;
        let grants = 0;
        let running: () => void = () => {};
        const started = new Promise<void>((resolve) => {
          running = resolve;
        });
        const streams = [p1, p3, p1].map(async (provider) => {
          while (!stop) {
            const handle = await sem(provider).acquire({ timeout: fx.ms(20_000) });
            grants += 1;
            if (grants === 6) running();
            await delay(fx.ms(5));
            await handle.release();
          }
        });
        await started; // the stream is running
        const big = await sem(p2).acquire({ permits: 3, timeout: fx.ms(10_000) });
        const during = grants;
        await delay(fx.ms(30));
        expect(grants).toBe(during); // all three permits are the big request's now
        expect(await big.release()).toBe(true);
        stop = true;
        await Promise.all(streams);
      },
      30_000,
    );

    it.runIf(weighted)(
      titled('mixed weights never exceed maxCount and all finish', skip),
      async () => {
        const providers = [await fx.provider(), await fx.provider()];
        const name = fx.name('weighted-load');
        let inside = 0;
        let peak = 0;
        const held: LockHandle[] = [];
        await Promise.all(
          Array.from({ length: 8 }, async (_, worker) => {
            const semaphore = providers[worker % 2]!.createSemaphore(name, 4);
            for (let trial = 0; trial < 5; trial++) {
              const permits = ((worker + trial) % 3) + 1;
              await semaphore.withPermit(
                async (handle) => {
                  held.push(handle);
                  inside += permits;
                  peak = Math.max(peak, inside);
                  await delay(fx.ms(3));
                  inside -= permits;
                },
                { permits, timeout: fx.ms(30_000) },
              );
            }
          }),
        );
        expect(peak).toBeLessThanOrEqual(4);
        expect(peak).toBeGreaterThanOrEqual(3);
        expect(held).toHaveLength(40);
      },
      60_000,
    );
  });
}
