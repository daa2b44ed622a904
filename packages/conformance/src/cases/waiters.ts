import { describe, expect, it } from 'vitest';
import {
  acquirerFor,
  type Fixture,
  median,
  nextWaitFor,
  type Subject,
  titled,
  track,
} from '../support.js';

/** What waiters that gave up leave behind, handoff right after a wait starts, vanished holds. */
export function waiterCases(fx: Fixture, subject: Subject): void {
  const loseLock = fx.options.faults?.loseLock;

  describe('waiters', () => {
    it('waiters that gave up (timeout, abort, refused try) leave nothing behind (3 rounds)', async () => {
      const name = fx.name('gave-up');
      await fx.prefill(subject, name);
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      const prompt = fx.ms((await fx.roundTripMs(p3)) + 100);
      for (let round = 0; round < 3; round++) {
        const holder = await acquirerFor(p1, name, subject.blocker).acquire({
          timeout: fx.ms(5000),
        });
        const contender = acquirerFor(p2, name, subject.spec);
        expect(await contender.tryAcquire()).toBeNull();
        await expect(contender.acquire({ timeout: 50 })).rejects.toMatchObject({
          code: 'LOCK_TIMEOUT',
        });
        const controller = new AbortController();
        const waited = nextWaitFor(name);
        const aborted = track(contender.acquire({ signal: controller.signal }));
        await waited;
        controller.abort(new Error('gave up'));
        await expect(aborted.promise).rejects.toThrow('gave up');
        expect(await holder.release()).toBe(true);
        // The next acquire after the release is granted promptly (a backend may need one
        // round trip to clean up after a waiter that gave up, no more).
        const fresh = acquirerFor(p3, name, subject.spec);
        const first = await fresh.tryAcquire({ timeout: prompt });
        expect(first, `round ${round}: the lock is free again`).not.toBeNull();
        const second = await fresh.tryAcquire();
        if (subject.exclusive) expect(second, 'only one permit was free').toBeNull();
        else expect(second, 'readers share').not.toBeNull();
        await second?.release();
        expect(await first!.release()).toBe(true);
        // Nothing is held or queued now: the blocker gets it in one attempt.
        const blocker = await acquirerFor(p1, name, subject.blocker).tryAcquire({
          timeout: prompt,
        });
        expect(blocker, `round ${round}: no phantom holder or waiter`).not.toBeNull();
        await blocker?.release();
      }
    });

    it('a waiter that timed out or was aborted holds and queues nothing once it rejected: a release, then a single try succeeds (4 rounds)', async () => {
      const name = fx.name('gave-up-now');
      await fx.prefill(subject, name);
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      for (let round = 0; round < 4; round++) {
        const holder = await acquirerFor(p1, name, subject.blocker).acquire({
          timeout: fx.ms(5000),
        });
        const contender = acquirerFor(p2, name, subject.spec);
        if (round % 2 === 0) {
          // A short timeout: the server-side wait (if any) may still be running at the deadline.
          await expect(contender.acquire({ timeout: 15 + round * 5 })).rejects.toMatchObject({
            code: 'LOCK_TIMEOUT',
          });
        } else {
          const controller = new AbortController();
          const waited = nextWaitFor(name);
          const aborted = track(contender.acquire({ signal: controller.signal }));
          await waited;
          controller.abort(new Error('gave up'));
          await expect(aborted.promise).rejects.toThrow('gave up');
        }
        expect(await holder.release()).toBe(true);
        // No grace: the contender's wait is over and a grant that raced it is released.
        const fresh = await acquirerFor(p3, name, subject.spec).tryAcquire();
        expect(fresh, `round ${round}: a single try right after the release`).not.toBeNull();
        expect(await fresh!.release()).toBe(true);
      }
    });

    it('a release right after a waiter starts waiting reaches it within one round trip + 50 ms (median of 5 rounds)', async () => {
      const name = fx.name('handoff-now');
      await fx.prefill(subject, name);
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const rtt = await fx.roundTripMs(p2);
      const handoffs: number[] = [];
      for (let round = 0; round < 5; round++) {
        const holder = await acquirerFor(p1, name, subject.blocker).acquire({
          timeout: fx.ms(5000),
        });
        const waited = nextWaitFor(name);
        const waiting = acquirerFor(p2, name, subject.spec)
          .acquire({ timeout: fx.ms(10_000) })
          .then((handle) => ({ handle, at: performance.now() }));
        await waited;
        const releasedAt = performance.now();
        await holder.release();
        const { handle, at } = await waiting;
        await handle.release();
        handoffs.push(at - releasedAt);
      }
      // Typical handoffs are one round trip; none waits for a safety poll (a missed wake-up).
      expect(median(handoffs), handoffs.join(', ')).toBeLessThanOrEqual(fx.ms(rtt + 50));
      expect(Math.max(...handoffs), handoffs.join(', ')).toBeLessThanOrEqual(fx.ms(rtt + 150));
    });

    it.runIf(loseLock)(
      titled(
        'release() of a hold that vanished before it was noticed resolves false and leaves the next holder alone',
        loseLock ? undefined : 'no faults.loseLock hook',
      ),
      async () => {
        const name = fx.name('vanished');
        await fx.prefill(subject, name);
        const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const bound = fx.ms(p1.capabilities.lostDetectionMs + 1000);
        const handle = await acquirerFor(p1, name, subject.spec).acquire();
        await loseLock!(handle, p1);
        const next = await acquirerFor(p2, name, subject.blocker).acquire({ timeout: bound });
        // No waiting for the lost signal: release at once, as a holder unaware of the loss.
        expect(await handle.release()).toBe(false);
        expect(await acquirerFor(p3, name, subject.spec).tryAcquire()).toBeNull();
        expect(next.signal.aborted).toBe(false);
        expect(await next.release()).toBe(true);
      },
      60_000,
    );
  });
}
