import type { ILockProvider, LockHandle } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { type Fixture, nextWaitFor, track, waitFor, yieldTurns } from '../support.js';

/** Readers that wait behind a queued writer, readers released together, gave-up writers. */
export function readWriteWaitingCases(fx: Fixture): void {
  describe('read-write lock: waiting', () => {
    it('readers waiting behind a queued writer go after it, and are released together (5 rounds)', async () => {
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      const bound = fx.ms((await fx.roundTripMs(p3)) + 100);
      const name = fx.name('readers-behind-writer');
      const rw = (provider: ILockProvider) => provider.createReadWriteLock(name);
      for (let round = 0; round < 5; round++) {
        const first = await rw(p1).acquireRead({ timeout: fx.ms(5000) });
        let waited = nextWaitFor(name);
        const writer = track(rw(p2).acquireWrite({ timeout: fx.ms(10_000) }));
        await waited;
        // The wait event may come just before the server has queued the writer: wait until
        // a new reader is refused.
        await waitFor(
          async () => {
            const probe = await rw(p3).tryAcquireRead();
            await probe?.release();
            return probe === null;
          },
          fx.ms(5000),
          'a new reader to be refused behind the waiting writer',
        );
        const readers: ReturnType<typeof track<LockHandle>>[] = [];
        for (const provider of [p3, p1]) {
          waited = nextWaitFor(name);
          readers.push(track(rw(provider).acquireRead({ timeout: fx.ms(10_000) })));
          await waited;
        }
        await first.release();
        const writing = await writer.promise;
        await yieldTurns(5);
        expect(readers.map((reader) => reader.settled)).toEqual([false, false]);
        const releasedAt = performance.now();
        await writing.release();
        const granted = await Promise.all(
          readers.map((reader) => reader.promise.then(() => performance.now())),
        );
        for (const at of granted)
          expect(at - releasedAt, `round ${round}`).toBeLessThanOrEqual(bound);
        const handles = await Promise.all(readers.map((reader) => reader.promise));
        // Both readers hold it at the same time: a writer is refused until both release.
        expect(await rw(p2).tryAcquireWrite()).toBeNull();
        for (const handle of handles) expect(await handle.release()).toBe(true);
      }
    });

    it('a writer gets in while readers keep re-acquiring (no livelock, 3 rounds)', async () => {
      const providers = [await fx.provider(), await fx.provider(), await fx.provider()];
      const name = fx.name('reader-churn');
      for (let round = 0; round < 3; round++) {
        let stop = false;
        const churn = providers.map(async (provider) => {
          while (!stop) {
            const reader = await provider
              .createReadWriteLock(name)
              .acquireRead({ timeout: fx.ms(10_000) });
            await yieldTurns(3);
            await reader.release();
          }
        });
        await yieldTurns(10);
        const writer = await providers[0]!
          .createReadWriteLock(name)
          .acquireWrite({ timeout: fx.ms(3000) })
          .finally(() => {
            stop = true;
          });
        await writer.release();
        await Promise.all(churn);
      }
    });

    it('a writer that gave up (timeout, abort, refused try) does not block new readers', async () => {
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      const name = fx.name('phantom-writer');
      const rw = (provider: ILockProvider) => provider.createReadWriteLock(name);
      // A backend may need one round trip to withdraw a writer that gave up, no more.
      const prompt = { timeout: fx.ms((await fx.roundTripMs(p3)) + 100) };
      const reader = await rw(p1).acquireRead();
      expect(await rw(p2).tryAcquireWrite()).toBeNull();
      const refusedTry = await rw(p3).tryAcquireRead();
      expect(refusedTry, 'after a refused writer try').not.toBeNull();
      await refusedTry?.release();
      await expect(rw(p2).acquireWrite({ timeout: 50 })).rejects.toMatchObject({
        code: 'LOCK_TIMEOUT',
      });
      const afterTimeout = await rw(p3).tryAcquireRead(prompt);
      expect(afterTimeout, 'after a writer timed out').not.toBeNull();
      await afterTimeout?.release();
      const controller = new AbortController();
      const waited = nextWaitFor(name);
      const aborted = rw(p2).acquireWrite({ signal: controller.signal });
      await waited;
      controller.abort(new Error('gave up'));
      await expect(aborted).rejects.toThrow('gave up');
      const afterAbort = await rw(p3).tryAcquireRead(prompt);
      expect(afterAbort, 'after a writer aborted').not.toBeNull();
      await afterAbort?.release();
      await reader.release();
      // The aborted writer's own provider may still be withdrawing it (a cancel in flight).
      const writer = await rw(p2).tryAcquireWrite(prompt);
      expect(writer, 'a writer on the provider whose writer gave up').not.toBeNull();
      await writer?.release();
    });
  });
}
