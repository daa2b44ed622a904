import { describe, expect, it } from 'vitest';
import { type Fixture, track, waitFor } from '../support.js';

/** Readers share; a writer excludes; a waiting writer blocks new readers. */
export function readWriteCases(fx: Fixture): void {
  describe('read-write lock', () => {
    it('many readers hold it together; a writer is refused while they do', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const name = fx.name('readers');
      const readers = [];
      for (let i = 0; i < 6; i++) {
        const reader = await [p1, p2][i % 2]!.createReadWriteLock(name).tryAcquireRead();
        expect(reader).not.toBeNull();
        readers.push(reader!);
      }
      expect(await p2.createReadWriteLock(name).tryAcquireWrite()).toBeNull();
      for (const reader of readers) await reader.release();
      const writer = await p2.createReadWriteLock(name).tryAcquireWrite();
      expect(writer).not.toBeNull();
      expect(await p1.createReadWriteLock(name).tryAcquireRead()).toBeNull();
      expect(await p1.createReadWriteLock(name).tryAcquireWrite()).toBeNull();
      await writer?.release();
    });

    it('a waiting writer blocks new readers, waits for every reader, then gets the lock promptly', async () => {
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      const name = fx.name('writer-preference');
      const r1 = await p1.createReadWriteLock(name).acquireRead();
      const r2 = await p1.createReadWriteLock(name).acquireRead();
      const writer = track(p2.createReadWriteLock(name).acquireWrite({ timeout: fx.ms(20_000) }));
      // Once the writer is queued, new readers must be refused (writer preference).
      await waitFor(
        async () => {
          const probe = await p3.createReadWriteLock(name).tryAcquireRead();
          if (!probe) return true;
          await probe.release();
          return false;
        },
        fx.ms(5000),
        'a new reader to be refused behind the waiting writer',
      );
      await r1.release();
      expect(await p3.createReadWriteLock(name).tryAcquireRead()).toBeNull();
      expect(writer.settled).toBe(false); // one reader still holds
      const releasedAt = performance.now();
      await r2.release();
      const handle = await writer.promise;
      const handoffMs = performance.now() - releasedAt;
      // A notified hand-off, as in the other waiting cases: a round trip plus 100 ms.
      expect(handoffMs).toBeLessThanOrEqual(fx.ms((await fx.roundTripMs(p3)) + 100));
      expect(await p3.createReadWriteLock(name).tryAcquireRead()).toBeNull();
      const reader = track(p3.createReadWriteLock(name).acquireRead({ timeout: fx.ms(10_000) }));
      await handle.release();
      const late = await reader.promise;
      await late.release();
    }, 60_000);
  });
}
