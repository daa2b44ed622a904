import { describe, expect, it } from 'vitest';
import { acquirerFor, type Fixture, type Subject, yieldTurns } from '../support.js';

/** Mutual exclusion, reentrancy, release and disposal, parallelism, for one subject. */
export function exclusionCases(fx: Fixture, subject: Subject): void {
  // Cases that only make sense when two contenders exclude each other (not for readers).
  const exclusiveIt = (title: string, fn: () => Promise<void>, timeoutMs?: number): void => {
    if (subject.exclusive) it(title, fn, timeoutMs);
  };
  describe('exclusion and release', () => {
    exclusiveIt('a second holder is refused on another provider and on the same one', async () => {
      const name = fx.name('exclusive');
      await fx.prefill(subject, name);
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const mine = acquirerFor(p1, name, subject.spec);
      const handle = await mine.acquire();
      expect(await acquirerFor(p2, name, subject.spec).tryAcquire()).toBeNull();
      expect(await mine.tryAcquire()).toBeNull();
      expect(await acquirerFor(p1, name, subject.spec).tryAcquire()).toBeNull();
      const other = await acquirerFor(p2, fx.name('other'), subject.spec).tryAcquire();
      expect(other).not.toBeNull();
      await other?.release();
      expect(await handle.release()).toBe(true);
      const again = await acquirerFor(p2, name, subject.spec).tryAcquire();
      expect(again).not.toBeNull();
      await again?.release();
    });

    exclusiveIt('is not reentrant: the same object waits on itself', async () => {
      const name = fx.name('reentrant');
      await fx.prefill(subject, name);
      const mine = acquirerFor(await fx.provider(), name, subject.spec);
      const handle = await mine.acquire();
      expect(await mine.tryAcquire({ timeout: fx.ms(100) })).toBeNull();
      const waiting = mine.acquire({ timeout: fx.ms(5000) });
      await handle.release();
      const second = await waiting;
      expect(second.fencingToken).toBeGreaterThan(handle.fencingToken);
      await second.release();
    });

    it('release is idempotent and never frees the next holder', async () => {
      const name = fx.name('idempotent');
      await fx.prefill(subject, name);
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      const first = await acquirerFor(p1, name, subject.spec).acquire();
      expect(await first.release()).toBe(true);
      expect(await first.release()).toBe(true);
      const second = await acquirerFor(p2, name, subject.blocker).acquire({ timeout: fx.ms(5000) });
      expect(await first.release()).toBe(true);
      expect(await acquirerFor(p3, name, subject.spec).tryAcquire()).toBeNull();
      expect(second.signal.aborted).toBe(false);
      await second.release();
    });

    it('`await using` and the with-helper release, on success and on throw', async () => {
      const name = fx.name('dispose');
      await fx.prefill(subject, name);
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const mine = acquirerFor(p1, name, subject.spec);
      const probe = acquirerFor(p2, name, subject.blocker);
      {
        await using held = await mine.acquire();
        expect(held.name).toBe(name);
        expect(await probe.tryAcquire()).toBeNull();
      }
      const afterUsing = await probe.tryAcquire();
      expect(afterUsing).not.toBeNull();
      await afterUsing?.release();
      expect(await mine.run(async (handle) => `ran ${handle.name === name}`)).toBe('ran true');
      const boom = new Error('boom');
      await expect(
        mine.run(() => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      const afterThrow = await probe.tryAcquire();
      expect(afterThrow).not.toBeNull();
      await afterThrow?.release();
    });

    exclusiveIt(
      '100 concurrent acquirers never overlap and all finish, with unique tokens',
      async () => {
        const name = fx.name('parallel');
        await fx.prefill(subject, name);
        const providers = [await fx.provider(), await fx.provider()];
        let inside = 0;
        let overlaps = 0;
        const tokens: bigint[] = [];
        await Promise.all(
          Array.from({ length: 100 }, async (_, i) => {
            const acquirer = acquirerFor(providers[i % 2]!, name, subject.spec);
            await acquirer.run(
              async (handle) => {
                inside += 1;
                if (inside > 1) overlaps += 1;
                tokens.push(handle.fencingToken);
                await yieldTurns(2);
                inside -= 1;
              },
              { timeout: fx.ms(60_000) },
            );
          }),
        );
        expect(overlaps).toBe(0);
        expect(tokens).toHaveLength(100);
        for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
      },
      120_000,
    );
  });
}
