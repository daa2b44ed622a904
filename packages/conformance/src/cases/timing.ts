import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channelNames, LockTimeoutError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { acquirerFor, type Fixture, type Subject, track } from '../support.js';

/** Timeouts, abort and handoff latency, for one subject. */
export function timingCases(fx: Fixture, subject: Subject): void {
  describe('timeouts, abort and handoff', () => {
    async function blocked(label: string) {
      const name = fx.name(label);
      await fx.prefill(subject, name);
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const holder = await acquirerFor(p1, name, subject.blocker).acquire();
      fx.defer(() => holder.release());
      return { name, holder, contender: acquirerFor(p2, name, subject.spec), provider: p2 };
    }

    it('a 200 ms timeout: acquire rejects with LockTimeoutError, tryAcquire returns null, on time', async () => {
      const { contender } = await blocked('timeout');
      let started = performance.now();
      const error = await contender.acquire({ timeout: 200 }).catch((e: unknown) => e);
      let elapsed = performance.now() - started;
      expect(LockTimeoutError.isInstance(error)).toBe(true);
      expect((error as LockTimeoutError).code).toBe('LOCK_TIMEOUT');
      expect(elapsed).toBeGreaterThanOrEqual(195);
      expect(elapsed).toBeLessThanOrEqual(fx.ms(500));
      started = performance.now();
      expect(await contender.tryAcquire({ timeout: 200 })).toBeNull();
      elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(195);
      expect(elapsed).toBeLessThanOrEqual(fx.ms(500));
    });

    it('a blocked acquire publishes lockkit:wait for its lock', async () => {
      const { name, contender } = await blocked('wait-event');
      const seen = new Promise<unknown>((resolve) => {
        const listener = (message: unknown): void => {
          // endsWith: a name-prefix decorator publishes the provider-level (prefixed) name.
          if (!(message as { name?: string }).name?.endsWith(name)) return;
          unsubscribe(channelNames.wait, listener);
          resolve(message);
        };
        subscribe(channelNames.wait, listener);
      });
      const controller = new AbortController();
      const waiting = contender.acquire({ signal: controller.signal }).catch(() => undefined);
      expect(await seen).toMatchObject({ kind: subject.spec.kind });
      controller.abort();
      await waiting;
    });

    it('timeout 0 is a single attempt', async () => {
      const { contender } = await blocked('zero');
      expect(await contender.tryAcquire({ timeout: 0 })).toBeNull();
      await expect(contender.acquire({ timeout: 0 })).rejects.toSatisfy(
        LockTimeoutError.isInstance,
      );
    });

    it('aborting a blocked acquire rejects promptly with the signal reason', async () => {
      const { contender } = await blocked('abort');
      const controller = new AbortController();
      const waiting = track(contender.acquire({ signal: controller.signal }));
      const reason = new Error('caller gave up');
      const started = performance.now();
      controller.abort(reason);
      await expect(waiting.promise).rejects.toBe(reason);
      expect(performance.now() - started).toBeLessThanOrEqual(fx.ms(250));
    });

    it('a pre-aborted signal rejects with its reason and takes nothing', async () => {
      const name = fx.name('pre-aborted');
      await fx.prefill(subject, name);
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const reason = new Error('already aborted');
      const signal = AbortSignal.abort(reason);
      await expect(acquirerFor(p1, name, subject.spec).acquire({ signal })).rejects.toBe(reason);
      await expect(acquirerFor(p1, name, subject.spec).tryAcquire({ signal })).rejects.toBe(reason);
      const probe = await acquirerFor(p2, name, subject.blocker).tryAcquire();
      expect(probe).not.toBeNull();
      await probe?.release();
    });

    it('an abort that races a grant never leaks the lock', async () => {
      const name = fx.name('abort-race');
      await fx.prefill(subject, name);
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      for (let round = 0; round < 10; round++) {
        const holder = await acquirerFor(p1, name, subject.blocker).acquire({
          timeout: fx.ms(5000),
        });
        const controller = new AbortController();
        const waiting = acquirerFor(p2, name, subject.spec)
          .acquire({ signal: controller.signal })
          .then(
            (handle) => handle.release(),
            () => false,
          );
        // Release and abort in the same turn, at a slightly different moment each round.
        await new Promise((resolve) => setTimeout(resolve, round % 3));
        void holder.release();
        controller.abort(new Error('race'));
        await waiting;
        const probe = await acquirerFor(p3, name, subject.blocker).acquire({
          timeout: fx.ms(2000),
        });
        await probe.release();
      }
    });

    it('a waiter gets the lock within one round trip + 50 ms of the release', async () => {
      const { holder, contender, provider } = await blocked('handoff');
      const bound = fx.ms((await fx.roundTripMs(provider)) + 50);
      const waiting = contender
        .acquire({ timeout: fx.ms(10_000) })
        .then((handle) => ({ handle, at: performance.now() }));
      // Let the waiter settle into its wait (subscribed / queued) before the clock starts.
      await new Promise((resolve) => setTimeout(resolve, fx.ms(100)));
      const releasedAt = performance.now();
      await holder.release();
      const { handle, at } = await waiting;
      await handle.release();
      expect(at - releasedAt).toBeLessThanOrEqual(bound);
    });
  });
}
