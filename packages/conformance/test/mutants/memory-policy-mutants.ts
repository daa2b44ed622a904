/** Memory mutants that break a policy a backend shares with core: events, writer waiting. */
import { delay } from '@lockkit/core/backend';
import { check, forward, type Mutant } from './types.js';

export const memoryPolicyMutants: readonly Mutant[] = [
  {
    name: 'no-wait-event',
    clause: '14 observability (lockkit:wait)',
    why: 'a server-side wait that never calls wait.waiting()',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: (request, wait) => inner.tryAcquire(request, { ...wait, waiting: () => {} }),
    }),
    async witness(kit) {
      const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
      const { channelNames } = await import('@lockkit/core');
      let seen = 0;
      const listener = (): void => {
        seen += 1;
      };
      subscribe(channelNames.wait, listener);
      const lock = (await kit.provider()).createLock(kit.name('event'));
      const held = await lock.acquire();
      await lock.acquire({ timeout: 20 }).catch(() => undefined);
      unsubscribe(channelNames.wait, listener);
      await held.release();
      check(seen > 0, 'no lockkit:wait');
    },
  },
  {
    name: 'writer-polls',
    clause: '10 fairness (a waiting writer blocks new readers)',
    why: 'a writer waits by retrying instead of registering as waiting',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: (request, wait) =>
        inner.tryAcquire(
          request,
          request.kind === 'write' ? { ...wait, deadline: Number.NEGATIVE_INFINITY } : wait,
        ),
    }),
    async witness(kit) {
      const rw = (await kit.provider()).createReadWriteLock(kit.name('writer-polls'));
      const reader = await rw.acquireRead();
      const controller = new AbortController();
      const writer = rw.acquireWrite({ signal: controller.signal }).catch(() => undefined);
      await delay(5);
      const second = await rw.tryAcquireRead();
      controller.abort();
      await writer;
      await second?.release();
      await reader.release();
      check(second === null, 'a new reader got in past a waiting writer');
    },
  },
];
