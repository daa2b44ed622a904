/** Memory mutants whose bug is in the backend's code (a wrapper around the memory backend). */
import type { MemoryLockStore } from '@lockkit/core';
import { delay, type MemoryGrant } from '@lockkit/core/backend';
import { check, forward, type Mutant } from './types.js';

let fakeIds = -1;
let instances = 0;

export const memoryBackendMutants: readonly Mutant[] = [
  {
    name: 'double-grant',
    clause: '1 mutual exclusion',
    why: 'an attempt that finds the lock taken returns a grant anyway (an inverted check)',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: async (request, wait) =>
        (await inner.tryAcquire(request, { ...wait, deadline: Number.NEGATIVE_INFINITY })) ?? {
          key: 'fake',
          id: fakeIds--,
          fencingToken: 1n << 40n,
        },
    }),
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('double'));
      const held = await lock.acquire();
      const second = await lock.tryAcquire();
      await second?.release();
      await held.release();
      check(second === null, 'two holders');
    },
  },
  {
    name: 'reentrant',
    clause: '2 not reentrant',
    why: 'a session lock (PostgreSQL/MySQL) stacks a second grant on the same connection',
    backend: 'memory',
    wrap: (inner) => {
      const mine = new Map<string, MemoryGrant>();
      return {
        ...forward(inner),
        tryAcquire: async (request, wait) => {
          const key = JSON.stringify([request.namespace, request.kind, request.name]);
          const stacked = mine.get(key);
          if (stacked && request.kind === 'mutex') return { ...stacked, id: fakeIds-- };
          const grant = (await inner.tryAcquire(request, wait)) as MemoryGrant | null;
          if (grant) mine.set(key, grant);
          return grant;
        },
      };
    },
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('reentrant'));
      const held = await lock.acquire();
      const again = await lock.tryAcquire();
      await again?.release();
      await held.release();
      check(again === null, 'the same provider got it twice');
    },
  },
  {
    name: 'silent-loss',
    clause: '6 lost signal',
    why: 'the backend never watches the session, so nobody is told',
    backend: 'memory',
    wrap: (inner) => ({ ...forward(inner), monitor: () => () => {} }),
    async witness(kit) {
      const p = await kit.provider();
      const handle = await p.createLock(kit.name('silent')).acquire();
      await p.loseLock(handle);
      await delay(50);
      check(handle.signal.aborted, 'no lost signal');
    },
  },
  {
    name: 'late-loss',
    clause: '6 lost signal (within lostDetectionMs)',
    why: 'the session check runs on a slow timer that the declared bound does not cover',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      monitor: (request, grant, lose) =>
        inner.monitor!(request, grant, (reason: string) => {
          setTimeout(() => lose(reason), 1000).unref();
        }),
    }),
    async witness(kit) {
      const p = await kit.provider();
      const handle = await p.createLock(kit.name('late')).acquire();
      await p.loseLock(handle);
      await delay(p.capabilities.lostDetectionMs + 200);
      check(handle.signal.aborted, 'lost signal later than declared');
    },
  },
  {
    name: 'stale-token',
    clause: '8 fencing tokens',
    why: 'the token is a constant (or the lock version of a fresh key)',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: async (request, wait) => {
        const grant = await inner.tryAcquire(request, wait);
        return grant && { ...grant, fencingToken: 1n };
      },
    }),
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('stale'));
      const a = await lock.acquire();
      await a.release();
      const b = await lock.acquire();
      await b.release();
      check(b.fencingToken > a.fencingToken, 'tokens did not increase');
    },
  },
  {
    name: 'token-per-provider',
    clause: '8 fencing tokens (across clients)',
    why: 'the counter lives in the client, not on the server',
    backend: 'memory',
    wrap: (inner) => {
      let counter = 0n;
      return {
        ...forward(inner),
        tryAcquire: async (request, wait) => {
          const grant = await inner.tryAcquire(request, wait);
          return grant && { ...grant, fencingToken: ++counter };
        },
      };
    },
    async witness(kit) {
      const name = kit.name('per-provider');
      const a = await (await kit.provider()).createLock(name).acquire();
      await a.release();
      const b = await (await kit.provider()).createLock(name).acquire();
      await b.release();
      check(b.fencingToken > a.fencingToken, 'a new client restarted the tokens');
    },
  },
  {
    name: 'blind-release',
    clause: '5 release (ownership-checked)',
    why: 'release is a plain DEL of the key, whoever holds it',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      release: async (_request, grant) => {
        const store = (inner as unknown as { store: MemoryLockStore }).store;
        const holders = store.holders(grant.key);
        for (const id of holders) store.release(grant.key, id);
        return holders.length > 0;
      },
    }),
    async witness(kit) {
      const p = await kit.provider();
      const name = kit.name('blind');
      const lost = await p.createLock(name).acquire();
      await p.loseLock(lost);
      const next = await p.createLock(name).acquire();
      await lost.release();
      const third = await p.createLock(name).tryAcquire();
      await third?.release();
      await next.release();
      check(third === null, "a stale release freed the next holder's lock");
    },
  },
  {
    name: 'lazy-release',
    clause: '5 release / close() frees at once',
    why: 'release is fire-and-forget: it resolves before the server has freed the lock',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      release: (request, grant) => {
        setTimeout(() => void inner.release(request, grant), 100);
        return Promise.resolve(true);
      },
    }),
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('lazy'));
      const held = await lock.acquire();
      await held.release();
      const again = await lock.tryAcquire();
      await again?.release();
      check(again !== null, 'still taken after release() resolved');
    },
  },
  {
    name: 'polling-waiter',
    clause: '9 notified waiting',
    why: 'no queue and no watch: waiters only retry on the poll interval',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: (request, wait) =>
        inner.tryAcquire(request, { ...wait, deadline: Number.NEGATIVE_INFINITY }),
    }),
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('poll'));
      const held = await lock.acquire();
      const waiting = lock.acquire().then(() => performance.now());
      await delay(5);
      const at = performance.now();
      await held.release();
      check((await waiting) - at < 100, 'handoff waited for the poll');
    },
  },
  {
    name: 'slow-refusal',
    clause: '3 timeouts (0 is one prompt attempt)',
    why: 'a refused attempt retries internally for a while before giving up',
    backend: 'memory',
    wrap: (inner) => ({
      ...forward(inner),
      tryAcquire: async (request, wait) => {
        const grant = await inner.tryAcquire(request, wait);
        if (!grant && wait.deadline === Number.NEGATIVE_INFINITY) await delay(150);
        return grant;
      },
    }),
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('slow'));
      const held = await lock.acquire();
      const at = performance.now();
      await lock.tryAcquire();
      const took = performance.now() - at;
      await held.release();
      check(took < 100, `a refused try took ${Math.round(took)} ms`);
    },
  },
  {
    name: 'semaphore-per-provider',
    clause: '1 exclusion (permits shared by every client)',
    why: 'permits are counted per connection instead of on the server',
    backend: 'memory',
    wrap: (inner) => {
      const instance = `client-${++instances}`;
      return {
        ...forward(inner),
        tryAcquire: (request, wait) =>
          inner.tryAcquire(
            request.kind === 'semaphore' ? { ...request, namespace: instance } : request,
            wait,
          ),
      };
    },
    async witness(kit) {
      const name = kit.name('per-client');
      const a = await (await kit.provider()).createSemaphore(name, 1).acquire();
      const b = await (await kit.provider()).createSemaphore(name, 1).tryAcquire();
      await b?.release();
      await a.release();
      check(b === null, 'two clients each got the only permit');
    },
  },
];
