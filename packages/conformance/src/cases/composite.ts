import { acquireAll, LockLostError, LockTimeoutError, tryAcquireAll } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { abortedWithin, type Fixture, titled } from '../support.js';

/** acquireAll: all-or-nothing, one deadline, combined signal, no deadlock. */
export function compositeCases(fx: Fixture): void {
  const loseLock = fx.options.faults?.loseLock;
  describe('acquireAll', () => {
    it('is all-or-nothing: a member held elsewhere rolls back the others', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const [a, b, c] = [fx.name('all-a'), fx.name('all-b'), fx.name('all-c')];
      const blocker = await p2.createLock(c).acquire();
      const targets = [p1.createLock(a), p1.createSemaphore(b, 1), p1.createLock(c)];
      expect(await tryAcquireAll(targets)).toBeNull();
      const freeA = await p2.createLock(a).tryAcquire();
      const freeB = await p2.createSemaphore(b, 1).tryAcquire();
      expect(freeA).not.toBeNull();
      expect(freeB).not.toBeNull();
      for (const handle of [freeA, freeB, blocker]) await handle?.release();
      const all = await acquireAll(targets, { timeout: fx.ms(5000) });
      expect(all.handles).toHaveLength(3);
      expect(all.fencingToken).toBe(
        all.handles.reduce(
          (max, handle) => (handle.fencingToken > max ? handle.fencingToken : max),
          0n,
        ),
      );
      expect(await all.release()).toBe(true);
      expect(
        await p2
          .createLock(c)
          .tryAcquire()
          .then((handle) => handle?.release()),
      ).toBe(true);
    });

    it('one deadline is shared by all members', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const names = [fx.name('deadline-a'), fx.name('deadline-b'), fx.name('deadline-c')];
      const blockers = [
        await p2.createLock(names[1]!).acquire(),
        await p2.createLock(names[2]!).acquire(),
      ];
      const started = performance.now();
      const error = await acquireAll(
        names.map((name) => p1.createLock(name)),
        { timeout: 300 },
      ).catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(LockTimeoutError.isInstance(error)).toBe(true);
      expect(elapsed).toBeLessThan(fx.ms(600)); // not 2 × 300
      const first = await p2.createLock(names[0]!).tryAcquire();
      expect(first).not.toBeNull();
      for (const handle of [first, ...blockers]) await handle?.release();
    });

    it('two clients asking for the same set in opposite orders do not deadlock', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const [x, y] = [fx.name('order-x'), fx.name('order-y')];
      let done = 0;
      await Promise.all(
        [p1, p2].map(async (provider, index) => {
          for (let round = 0; round < 10; round++) {
            const locks = [provider.createLock(x), provider.createLock(y)];
            const all = await acquireAll(index === 0 ? locks : locks.reverse(), {
              timeout: fx.ms(20_000),
            });
            await all.release();
            done += 1;
          }
        }),
      );
      expect(done).toBe(20);
    }, 60_000);

    it.runIf(loseLock)(
      titled(
        'the composite signal aborts when any member is lost',
        loseLock ? undefined : 'no faults.loseLock hook',
      ),
      async () => {
        const provider = await fx.provider();
        const all = await acquireAll([
          provider.createLock(fx.name('lost-a')),
          provider.createLock(fx.name('lost-b')),
        ]);
        await loseLock!(all.handles[1]!, provider);
        const reason = await abortedWithin(
          all.signal,
          fx.ms(provider.capabilities.lostDetectionMs + 500),
        );
        expect(LockLostError.isInstance(reason)).toBe(true);
        expect(await all.release()).toBe(false);
      },
      60_000,
    );
  });
}
