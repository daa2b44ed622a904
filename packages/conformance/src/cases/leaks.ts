import { describe, expect, it } from 'vitest';
import { type Fixture, waitFor } from '../support.js';

function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo())
    counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

function grown(before: Map<string, number>): string[] {
  const grew: string[] = [];
  for (const [type, count] of resourceCounts()) {
    if (count > (before.get(type) ?? 0)) grew.push(`${type}: ${before.get(type) ?? 0} → ${count}`);
  }
  return grew;
}

/** Nothing stays open in-process after release + close. */
export function leakCases(fx: Fixture): void {
  describe('no leaks', () => {
    it('after release and close no timers, sockets or handles remain', async () => {
      const before = resourceCounts();
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const name = fx.name('leaks');
      const held = await p1.createLock(name).acquire();
      expect(await p2.createLock(name).tryAcquire({ timeout: 50 })).toBeNull();
      const controller = new AbortController();
      const aborted = p2
        .createLock(name)
        .acquire({ signal: controller.signal })
        .catch(() => 'aborted');
      controller.abort();
      expect(await aborted).toBe('aborted');
      const reader = await p2.createReadWriteLock(name).acquireRead();
      const permit = await p2.createSemaphore(name, 2).acquire();
      for (const handle of [held, reader, permit]) await handle.release();
      await p1.close();
      await p2.close();
      fx.untrack(p1);
      fx.untrack(p2);
      await waitFor(
        () => grown(before).length === 0,
        fx.ms(5000),
        `resources to close (${grown(before).join(', ')})`,
      );
    }, 30_000);
  });
}
