/** Mutants of the outage policy and of typed errors, on the file backend (a real outage). */
import { BackendUnavailableError } from '@lockkit/core';
import { check, forward, type Mutant } from './types.js';

/** What a call on an unusable lock directory settles with. */
async function outcomeOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => ({ resolved: value }),
    (error: unknown) => error,
  );
}

export const outageMutants: readonly Mutant[] = [
  {
    name: 'outage-is-busy',
    clause: 'outage (an unreachable server is not "someone holds it")',
    why: 'an attempt that cannot reach the server answers null, as if the lock were held',
    backend: 'file',
    cases: 'cannot be reached',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: (request, wait) =>
        inner.tryAcquire(request, wait).catch((error: unknown) => {
          if (BackendUnavailableError.isInstance(error)) return null;
          throw error;
        }),
    }),
    async witness(kit) {
      const lock = (await kit.unreachable()).createLock(kit.name('busy'));
      const outcome = await outcomeOf(lock.tryAcquire());
      check(BackendUnavailableError.isInstance(outcome), 'tryAcquire() did not report the outage');
    },
  },
  {
    name: 'raw-client-error',
    clause: '12 errors (typed, with the client error as cause)',
    why: "the client library's error is rethrown as it is instead of BackendUnavailableError",
    backend: 'file',
    cases: 'cannot be reached',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: (request, wait) =>
        inner.tryAcquire(request, wait).catch((error: unknown) => {
          throw BackendUnavailableError.isInstance(error) && error.cause ? error.cause : error;
        }),
    }),
    async witness(kit) {
      const lock = (await kit.unreachable()).createLock(kit.name('raw'));
      const outcome = await outcomeOf(lock.tryAcquire());
      check(BackendUnavailableError.isInstance(outcome), `not a typed error: ${String(outcome)}`);
    },
  },
];
