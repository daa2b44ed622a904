import {
  BackendUnavailableError,
  type ILockProvider,
  LockAbortedError,
  LockLostError,
} from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { abortedWithin, acquirerFor, type Fixture, type LockSpec, titled } from '../support.js';

const kinds: readonly (readonly [string, LockSpec])[] = [
  ['mutex', { kind: 'mutex', maxCount: 1 }],
  ['read lock', { kind: 'read', maxCount: Number.POSITIVE_INFINITY }],
  ['write lock', { kind: 'write', maxCount: 1 }],
  ['semaphore(3)', { kind: 'semaphore', maxCount: 3 }],
];

/**
 * The outage policy (docs/contract.md, "When the server cannot be reached"): the same calls
 * give the same errors, in the same time, on every backend.
 */
export function outageCases(fx: Fixture): void {
  const outage = fx.options.faults?.outage;
  const noHook = outage ? undefined : 'no faults.outage hook';
  const interrupt = outage?.interrupt;
  const noInterrupt = interrupt ? undefined : 'no faults.outage.interrupt hook';

  describe('when the server cannot be reached', () => {
    async function unreachable(): Promise<{ provider: ILockProvider; boundMs: number }> {
      const provider = await outage!.createUnreachableProvider();
      fx.adopt(provider);
      return { provider, boundMs: fx.ms(provider.capabilities.unavailableMs + 500) };
    }

    function expectUnavailable(error: unknown): void {
      expect(BackendUnavailableError.isInstance(error)).toBe(true);
      const unavailable = error as BackendUnavailableError;
      expect(unavailable.code).toBe('BACKEND_UNAVAILABLE');
      expect(unavailable.cause).toBeDefined();
      if (outage?.address) expect(unavailable.message).toContain(outage.address);
    }

    it.runIf(outage)(
      titled('tryAcquire() rejects with BackendUnavailableError (cause, address), in time', noHook),
      async () => {
        const { provider, boundMs } = await unreachable();
        for (const [label, spec] of kinds) {
          const started = performance.now();
          const error = await acquirerFor(provider, fx.name('try'), spec)
            .tryAcquire()
            .then(
              (handle) => new Error(`${label}: resolved ${handle === null ? 'null' : 'a handle'}`),
              (e: unknown) => e,
            );
          expectUnavailable(error);
          expect(performance.now() - started, label).toBeLessThanOrEqual(boundMs);
        }
      },
    );

    it.runIf(outage)(
      titled('a timed acquire or tryAcquire keeps to its deadline, then rejects with it', noHook),
      async () => {
        const { provider, boundMs } = await unreachable();
        // The deadline must outlast the first attempt: one that passes while the first attempt
        // is still waiting is a timeout, by the contract. A refused connection fails well
        // within unavailableMs (its bound for a hung server, seconds on some backends), so
        // the deadline is past that bound, or 1 s, whichever comes first.
        const firstAttemptMs = Math.min(provider.capabilities.unavailableMs + 200, 1000);
        const timeout = fx.ms(Math.max(400, firstAttemptMs));
        for (const [label, spec] of [kinds[0]!, kinds[3]!]) {
          const acquirer = acquirerFor(provider, fx.name('timed'), spec);
          for (const call of ['acquire', 'tryAcquire'] as const) {
            const started = performance.now();
            const error = await acquirer[call]({ timeout }).then(
              (handle) =>
                new Error(`${label} ${call}: resolved ${handle === null ? 'null' : 'a handle'}`),
              (e: unknown) => e,
            );
            const elapsed = performance.now() - started;
            expectUnavailable(error);
            expect(elapsed, `${label} ${call}`).toBeGreaterThanOrEqual(timeout - 5);
            expect(elapsed, `${label} ${call}`).toBeLessThanOrEqual(timeout + boundMs);
          }
        }
      },
    );

    it.runIf(outage)(
      titled('an untimed acquire keeps trying until the caller aborts it', noHook),
      async () => {
        const { provider, boundMs } = await unreachable();
        const controller = new AbortController();
        const reason = new Error('caller gave up');
        const started = performance.now();
        const waiting = acquirerFor(provider, fx.name('untimed'), kinds[0]![1])
          .acquire({ signal: controller.signal })
          .then(
            () => new Error('resolved a handle'),
            (e: unknown) => e,
          );
        setTimeout(() => controller.abort(reason), fx.ms(300));
        expect(await waiting).toBe(reason);
        const elapsed = performance.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(fx.ms(300) - 5);
        expect(elapsed).toBeLessThanOrEqual(fx.ms(300) + boundMs);
      },
    );

    it.runIf(outage)(
      titled('close() ends an untimed wait with LockAbortedError and resolves in time', noHook),
      async () => {
        const { provider, boundMs } = await unreachable();
        const waiting = acquirerFor(provider, fx.name('close'), kinds[2]![1])
          .acquire()
          .then(
            () => new Error('resolved a handle'),
            (e: unknown) => e,
          );
        await new Promise((resolve) => setTimeout(resolve, fx.ms(200)));
        const started = performance.now();
        await provider.close();
        expect(performance.now() - started).toBeLessThanOrEqual(boundMs);
        expect(LockAbortedError.isInstance(await waiting)).toBe(true);
      },
    );

    it.runIf(interrupt)(
      titled(
        'a held lock cut off from its server: release() resolves false in time, the signal reports the loss, close() resolves',
        noInterrupt,
      ),
      async () => {
        const provider = await fx.provider();
        const boundMs = fx.ms(provider.capabilities.unavailableMs + 500);
        const handle = await provider
          .createLock(fx.name('cut-off'))
          .acquire({ timeout: fx.ms(5000) });
        const restore = await interrupt!(provider);
        try {
          const started = performance.now();
          expect(await handle.release()).toBe(false);
          expect(performance.now() - started).toBeLessThanOrEqual(boundMs);
          const reason = await abortedWithin(handle.signal, boundMs);
          expect(LockLostError.isInstance(reason)).toBe(true);
          const closing = performance.now();
          fx.untrack(provider);
          await provider.close();
          expect(performance.now() - closing).toBeLessThanOrEqual(boundMs);
        } finally {
          await restore();
        }
      },
    );
  });
}
