import { LockTimeoutError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { acquirerFor, type Fixture, median, type Subject } from '../support.js';

/** How long a refused attempt and short timeouts take, for one subject. */
export function timingBoundCases(fx: Fixture, subject: Subject): void {
  describe('timing bounds', () => {
    async function blocked(label: string) {
      const name = fx.name(label);
      await fx.prefill(subject, name);
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const holder = await acquirerFor(p1, name, subject.blocker).acquire();
      fx.defer(() => holder.release());
      const rtt = await fx.roundTripMs(p2);
      return { contender: acquirerFor(p2, name, subject.spec), rtt };
    }

    it('a refused tryAcquire() settles within a few round trips (median of 5)', async () => {
      const { contender, rtt } = await blocked('refused-fast');
      const samples: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        expect(await contender.tryAcquire()).toBeNull();
        samples.push(performance.now() - started);
      }
      expect(median(samples)).toBeLessThanOrEqual(fx.ms(3 * rtt + 50));
    });

    it.each([0, 50, 200])(
      'timeout %i ms: acquire rejects and tryAcquire resolves null within its bounds',
      async (timeout) => {
        const { contender, rtt } = await blocked(`bound-${timeout}`);
        const upper = timeout + fx.ms(3 * rtt + 150);
        let started = performance.now();
        const error = await contender.acquire({ timeout }).catch((e: unknown) => e);
        let elapsed = performance.now() - started;
        expect(LockTimeoutError.isInstance(error)).toBe(true);
        expect(elapsed).toBeGreaterThanOrEqual(timeout - 5);
        expect(elapsed).toBeLessThanOrEqual(upper);
        started = performance.now();
        expect(await contender.tryAcquire({ timeout })).toBeNull();
        elapsed = performance.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(timeout - 5);
        expect(elapsed).toBeLessThanOrEqual(upper);
      },
    );
  });
}
