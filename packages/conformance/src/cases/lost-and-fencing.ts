import { LockLostError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { abortedWithin, acquirerFor, type Fixture, type Subject, titled } from '../support.js';

/** Lost signal and fencing tokens, for one subject. */
export function lostAndFencingCases(fx: Fixture, subject: Subject): void {
  const loseLock = fx.options.faults?.loseLock;
  const noHook = loseLock ? undefined : 'no faults.loseLock hook';

  describe('lost signal and fencing', () => {
    it('a normal release does not abort the signal', async () => {
      const name = fx.name('no-loss');
      await fx.prefill(subject, name);
      const handle = await acquirerFor(await fx.provider(), name, subject.spec).acquire();
      expect(handle.signal.aborted).toBe(false);
      expect(await handle.release()).toBe(true);
      expect(handle.signal.aborted).toBe(false);
    });

    it.runIf(loseLock)(
      titled(
        'an injected loss aborts the signal within the declared bound, frees the lock, and release reports false',
        noHook,
      ),
      async () => {
        const name = fx.name('lost');
        await fx.prefill(subject, name);
        const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const bound = fx.ms(p1.capabilities.lostDetectionMs + 500);
        const handle = await acquirerFor(p1, name, subject.spec).acquire();
        await loseLock!(handle, p1);
        const reason = await abortedWithin(handle.signal, bound);
        expect(LockLostError.isInstance(reason)).toBe(true);
        expect((reason as LockLostError).code).toBe('LOCK_LOST');
        expect(handle.signal.aborted).toBe(true); // read late: still aborted
        const next = await acquirerFor(p2, name, subject.blocker).acquire({ timeout: bound });
        expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
        expect(await handle.release()).toBe(false);
        // The late release of the lost handle must not have freed the new holder.
        expect(await acquirerFor(p3, name, subject.spec).tryAcquire()).toBeNull();
        expect(next.signal.aborted).toBe(false);
        expect(await next.release()).toBe(true);
      },
      60_000,
    );

    it('tokens strictly increase across releases and across provider instances', async () => {
      const name = fx.name('fencing');
      await fx.prefill(subject, name);
      const p1 = await fx.provider();
      const first = await acquirerFor(p1, name, subject.spec).acquire();
      await first.release();
      const second = await acquirerFor(p1, name, subject.spec).acquire();
      await second.release();
      expect(typeof first.fencingToken).toBe('bigint');
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      await p1.close();
      fx.untrack(p1);
      const p2 = await fx.provider();
      const third = await acquirerFor(p2, name, subject.blocker).acquire();
      await third.release();
      expect(third.fencingToken).toBeGreaterThan(second.fencingToken);
    });
  });
}
