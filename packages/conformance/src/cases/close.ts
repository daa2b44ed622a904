import type { LockHandle } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { type Fixture, nextWaitFor } from '../support.js';

/** What `close()` alone does to the locks a provider holds. */
export function closeCases(fx: Fixture): void {
  describe('close() alone', () => {
    it('frees every held lock for others at once; the handles were released normally', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const name = fx.name('close-frees');
      const held: LockHandle[] = [
        await p1.createLock(name).acquire(),
        await p1.createReadWriteLock(name).acquireWrite(),
        await p1.createSemaphore(name, 2).acquire(),
        await p1.createSemaphore(name, 2).acquire(),
        await p1.createReadWriteLock(`${name}-r`).acquireRead(),
        await p1.createReadWriteLock(`${name}-r`).acquireRead(),
      ];
      fx.untrack(p1);
      await p1.close();
      // A normal release: no lost signal, and release() reports the first result (held).
      for (const handle of held) expect(handle.signal.aborted).toBe(false);
      for (const handle of held) expect(await handle.release()).toBe(true);
      const again = [
        await p2.createLock(name).tryAcquire(),
        await p2.createReadWriteLock(name).tryAcquireWrite(),
        await p2.createSemaphore(name, 2).tryAcquire(),
        await p2.createSemaphore(name, 2).tryAcquire(),
        await p2.createReadWriteLock(`${name}-r`).tryAcquireWrite(),
      ];
      for (const handle of again) expect(handle).not.toBeNull();
      for (const handle of again) expect(await handle?.release()).toBe(true);
    });

    it('a waiter on another provider is granted promptly when the holder closes', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const bound = fx.ms((await fx.roundTripMs(p2)) + 100);
      const name = fx.name('close-handoff');
      const held = await p1.createLock(name).acquire();
      const waited = nextWaitFor(name);
      const waiting = p2
        .createLock(name)
        .acquire({ timeout: fx.ms(10_000) })
        .then((handle) => ({ handle, at: performance.now() }));
      await waited;
      fx.untrack(p1);
      await p1.close();
      const closedAt = performance.now();
      const { handle, at } = await waiting;
      expect(at - closedAt).toBeLessThanOrEqual(bound);
      expect(handle.fencingToken).toBeGreaterThan(held.fencingToken);
      expect(await handle.release()).toBe(true);
    });

    it('close() twice resolves; release() of a handle after close resolves without throwing', async () => {
      const provider = await fx.provider();
      const handle = await provider.createLock(fx.name('close-twice')).acquire();
      fx.untrack(provider);
      await Promise.all([provider.close(), provider.close()]);
      await provider.close();
      expect(await handle.release()).toBe(true);
      expect(handle.signal.aborted).toBe(false);
    });
  });
}
