import { delay } from '@lockkit/core/backend';
import { describe, expect, it } from 'vitest';
import type { Fixture } from '../support.js';

/** At most maxCount holders; permits shared across providers. */
export function semaphoreCases(fx: Fixture): void {
  describe('semaphore', () => {
    it('with max 3, 10 workers × 25 trials observe concurrency levels exactly {1, 2, 3}', async () => {
      const providers = [await fx.provider(), await fx.provider()];
      const name = fx.name('levels');
      let inside = 0;
      const levels = new Set<number>();
      await Promise.all(
        Array.from({ length: 10 }, async (_, worker) => {
          const semaphore = providers[worker % 2]!.createSemaphore(name, 3);
          expect(semaphore.maxCount).toBe(3);
          for (let trial = 0; trial < 25; trial++) {
            await semaphore.withPermit(
              async () => {
                inside += 1;
                levels.add(inside);
                await delay(fx.ms(5)); // simulated work, long enough for holders to overlap
                inside -= 1;
              },
              { timeout: fx.ms(60_000) },
            );
          }
        }),
      );
      expect([...levels].sort()).toEqual([1, 2, 3]);
    }, 120_000);

    it('100 tasks with max 10 reach exactly 10 holders and never 11', async () => {
      const providers = [await fx.provider(), await fx.provider()];
      const name = fx.name('peak');
      let inside = 0;
      let peak = 0;
      // Holders stay until ten are inside together (so reaching 10 does not depend on how
      // fast grants come under load), or until a generous bound: a semaphore that never
      // grants a 10th permit fails on the peak, not by hanging. While ten wait, an 11th
      // grant would be seen.
      let tenInside: () => void = () => {};
      const ten = new Promise<void>((resolve) => {
        tenInside = resolve;
      });
      await Promise.all(
        Array.from({ length: 100 }, (_, task) =>
          providers[task % 2]!.createSemaphore(name, 10).withPermit(
            async () => {
              inside += 1;
              peak = Math.max(peak, inside);
              if (inside === 10) tenInside();
              const bound = new AbortController();
              await Promise.race([ten, delay(fx.ms(2000), bound.signal).catch(() => {})]);
              bound.abort();
              await delay(fx.ms(5)); // a little work after the meeting point
              inside -= 1;
            },
            { timeout: fx.ms(60_000) },
          ),
        ),
      );
      expect(peak).toBe(10);
    }, 120_000);

    it('two providers drain the same permits; releasing one frees exactly one', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const name = fx.name('shared-permits');
      const a1 = await p1.createSemaphore(name, 3).acquire();
      const a2 = await p1.createSemaphore(name, 3).acquire();
      const b1 = await p2.createSemaphore(name, 3).acquire();
      expect(await p1.createSemaphore(name, 3).tryAcquire()).toBeNull();
      expect(await p2.createSemaphore(name, 3).tryAcquire()).toBeNull();
      await a1.release();
      const b2 = await p2.createSemaphore(name, 3).tryAcquire({ timeout: fx.ms(2000) });
      expect(b2).not.toBeNull();
      expect(await p1.createSemaphore(name, 3).tryAcquire()).toBeNull();
      for (const handle of [a2, b1, b2!]) expect(await handle.release()).toBe(true);
    });

    it('a huge maxCount (2^31-1) with a long name works', async () => {
      const provider = await fx.provider();
      const semaphore = provider.createSemaphore(fx.name('huge') + 'n'.repeat(2000), 2 ** 31 - 1);
      const handles = [];
      for (let i = 0; i < 3; i++) handles.push(await semaphore.acquire({ timeout: fx.ms(5000) }));
      for (const handle of handles) expect(await handle.release()).toBe(true);
    });
  });
}
