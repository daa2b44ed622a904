import type { LockHandle } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { type Fixture, nextWaitFor, titled } from '../support.js';

/** Out-of-order permit releases, FIFO grant order, long holds over several leases. */
export function orderingCases(fx: Fixture, fifo: boolean, leases: boolean): void {
  describe('ordering and long holds', () => {
    it('semaphore permits released out of order free exactly as many permits', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const name = fx.name('out-of-order');
      const sem = (provider: typeof p1) => provider.createSemaphore(name, 3);
      const [a, b, c] = [await sem(p1).acquire(), await sem(p2).acquire(), await sem(p1).acquire()];
      const waited = nextWaitFor(name);
      const waiting = sem(p2).acquire({ timeout: fx.ms(5000) });
      await waited;
      expect(await b.release()).toBe(true); // the middle one first
      const d = await waiting;
      expect(await sem(p1).tryAcquire()).toBeNull();
      expect(await c.release()).toBe(true);
      expect(await a.release()).toBe(true);
      const [e, f] = [await sem(p2).tryAcquire(), await sem(p1).tryAcquire()];
      expect(e).not.toBeNull();
      expect(f).not.toBeNull();
      expect(await sem(p2).tryAcquire()).toBeNull();
      for (const handle of [e!, d, f!]) expect(await handle.release()).toBe(true);
      const all: LockHandle[] = [];
      for (let i = 0; i < 3; i++) {
        const handle = await sem(i % 2 ? p1 : p2).tryAcquire();
        expect(handle, `permit ${i + 1} of 3 after all releases`).not.toBeNull();
        all.push(handle!);
      }
      for (const handle of all) await handle.release();
    });

    it.runIf(fifo)(
      titled(
        'waiters are granted in arrival order',
        fifo ? undefined : 'capabilities.fifo is false',
      ),
      async () => {
        const providers = [await fx.provider(), await fx.provider(), await fx.provider()];
        const name = fx.name('fifo');
        const holder = await providers[0]!.createLock(name).acquire();
        const order: number[] = [];
        const waiters: Promise<void>[] = [];
        for (let i = 0; i < 6; i++) {
          const waited = nextWaitFor(name);
          waiters.push(
            providers[(i % 2) + 1]!.createLock(name)
              .acquire({ timeout: fx.ms(10_000) })
              .then(async (handle) => {
                order.push(i);
                await handle.release();
              }),
          );
          await waited;
        }
        await holder.release();
        await Promise.all(waiters);
        expect(order).toEqual([0, 1, 2, 3, 4, 5]);
      },
    );

    const leaseMs = fx.options.leaseMs;
    const skip = !leases
      ? 'capabilities.leases is false'
      : leaseMs
        ? undefined
        : 'no leaseMs option';
    it.runIf(!skip)(
      titled('a lock held over 3.5 lease lengths stays held and exclusive', skip),
      async () => {
        const [p1, p2] = [await fx.provider(), await fx.provider()];
        const name = fx.name('long-hold');
        const held = [
          await p1.createLock(name).acquire(),
          await p1.createReadWriteLock(name).acquireWrite(),
          await p1.createSemaphore(name, 1).acquire(),
        ];
        const until = performance.now() + 3.5 * leaseMs!;
        while (performance.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, leaseMs! / 4));
          for (const handle of held) expect(handle.signal.aborted).toBe(false);
          expect(await p2.createLock(name).tryAcquire()).toBeNull();
          expect(await p2.createReadWriteLock(name).tryAcquireRead()).toBeNull();
          expect(await p2.createSemaphore(name, 1).tryAcquire()).toBeNull();
        }
        for (const handle of held) expect(await handle.release()).toBe(true);
      },
      60_000,
    );
  });
}
