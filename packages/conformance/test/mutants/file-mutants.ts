/** Mutants of the file backend (cross-process): wrappers and lying capability declarations. */
import { rmSync } from 'node:fs';
import { delay } from '@lockkit/core/backend';
import type { FileGrant } from '../../../file/src/file-lock-backend.js';
import { spawnHolder } from '../../src/index.js';
import { check, forward, type Mutant } from './types.js';
import { fileLeaseMs } from './worlds.js';

const childModule = new URL('./file-child.ts', import.meta.url).href;

export const fileMutants: readonly Mutant[] = [
  {
    name: 'file-local-token',
    clause: '8 fencing tokens (across processes)',
    why: 'the counter is kept in the process instead of on disk',
    backend: 'file',
    cases: 'mutex (cross-process|lost signal and fencing)',
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
      const name = kit.name('local-token');
      const a = await (await kit.provider()).createLock(name).acquire();
      await a.release();
      const b = await (await kit.provider()).createLock(name).acquire();
      await b.release();
      check(b.fencingToken > a.fencingToken, 'another process restarted the tokens');
    },
  },
  {
    name: 'file-short-abandoned-bound',
    clause: '7 leases (abandonedReleaseMs: a killed holder)',
    why: 'the declared bound forgets the lease: a SIGKILLed holder blocks for longer',
    backend: 'file',
    capabilities: { abandonedReleaseMs: 100 },
    cases: 'mutex cross-process',
    async witness(kit) {
      const provider = await kit.provider();
      const name = kit.name('abandoned');
      const holder = await spawnHolder(
        { module: childModule, env: kit.childEnv },
        name,
        { kind: 'mutex', maxCount: 1 },
        20_000,
      );
      await holder.kill();
      const bound = provider.capabilities.abandonedReleaseMs + 1000;
      const handle = await provider.createLock(name).tryAcquire({ timeout: bound });
      await handle?.release();
      check(handle !== null, `a killed holder's lock was not free within ${bound} ms`);
    },
  },
  {
    name: 'file-no-touch',
    clause: '7 leases (extended while held)',
    why: 'extend computes a new expiry but never refreshes the heartbeat on disk',
    backend: 'file',
    cases: 'long holds',
    wrap: (inner) => ({
      ...forward(inner),
      extend: async () => performance.now() + fileLeaseMs,
    }),
    async witness(kit) {
      const [p1, p2] = [await kit.provider(), await kit.provider()];
      const name = kit.name('no-touch');
      const held = await p1.createSemaphore(name, 1).acquire();
      await delay(fileLeaseMs + 800);
      const other = await p2.createSemaphore(name, 1).tryAcquire();
      await other?.release();
      await held.release();
      check(other === null, 'another client took over a lock that was still held');
    },
  },
  {
    name: 'file-extend-false',
    clause: '7 leases (no spurious loss)',
    why: 'extend compares the wrong timestamp and reports every hold as gone',
    backend: 'file',
    cases: 'long holds',
    wrap: (inner) => ({ ...forward(inner), extend: async () => false }),
    async witness(kit) {
      const handle = await (await kit.provider()).createLock(kit.name('extend')).acquire();
      await delay(fileLeaseMs / 2);
      const aborted = handle.signal.aborted;
      await handle.release();
      check(!aborted, 'a held lock was reported lost');
    },
  },
  {
    name: 'file-no-watch',
    clause: '9 notified waiting (across processes)',
    why: 'no fs.watch: waiters in other processes only notice on the poll interval',
    backend: 'file',
    cases: 'mutex (cross-process|waiters|timeouts, abort and handoff)',
    wrap: (inner) => {
      const { watch: _dropped, ...rest } = forward(inner);
      return rest;
    },
    async witness(kit) {
      const [p1, p2] = [await kit.provider(), await kit.provider()];
      const name = kit.name('no-watch');
      const held = await p1.createLock(name).acquire();
      const waiting = p2
        .createLock(name)
        .acquire()
        .then(() => performance.now());
      await delay(50);
      const at = performance.now();
      await held.release();
      const took = (await waiting) - at;
      check(took < 200, `handoff took ${Math.round(took)} ms`);
    },
  },
  {
    name: 'file-release-lies',
    clause: '5 release (true only if still held)',
    why: 'release treats "marker already gone" as success',
    backend: 'file',
    cases: 'mutex (waiters|lost signal)',
    wrap: (inner) => ({
      ...forward(inner),
      release: async (request, grant) => {
        await inner.release(request, grant);
        return true;
      },
    }),
    async witness(kit) {
      const p = await kit.provider();
      const handle = await p.createLock(kit.name('lies')).acquire();
      await p.loseLock(handle);
      check((await handle.release()) === false, 'release of a lost hold said true');
    },
  },
  {
    name: 'file-blind-release',
    clause: '5 release (ownership-checked, across processes)',
    why: 'release removes the lock directory by path, whoever holds it now',
    backend: 'file',
    cases: 'mutex (waiters|lost signal)',
    wrap: (inner) => ({
      ...forward(inner),
      release: async (request, grant: FileGrant) => {
        const held = await inner.release(request, grant);
        rmSync(grant.lockDir ?? grant.marker, { recursive: true, force: true });
        return held;
      },
    }),
    async witness(kit) {
      const p = await kit.provider();
      const name = kit.name('blind');
      const lost = await p.createLock(name).acquire();
      await p.loseLock(lost);
      const next = await p.createLock(name).acquire({ timeout: 5000 });
      await lost.release();
      const third = await p.createLock(name).tryAcquire();
      await third?.release();
      await next.release();
      check(third === null, "a stale release freed the next holder's lock");
    },
  },
  {
    name: 'file-namespace-ignored',
    clause: '11 names (namespace isolates, on disk)',
    why: 'the namespace option never reaches the lock path',
    backend: 'file',
    cases: 'namespaces',
    dropsNamespace: true,
    async witness(kit) {
      const name = kit.name('ns');
      const a = await (await kit.provider({ namespace: 'a' })).createLock(name).acquire();
      const b = await (await kit.provider({ namespace: 'b' })).createLock(name).tryAcquire();
      await b?.release();
      await a.release();
      check(b !== null, 'two namespaces share a lock');
    },
  },
  {
    name: 'file-close-leaks-timer',
    clause: '13 no leaks (close() stops everything the provider started)',
    why: 'close() forgets a background timer (a sweep or retry loop), so the process never ends',
    backend: 'file',
    cases: 'keeps its process alive',
    wrap: (inner) => ({
      ...forward(inner),
      close: async () => {
        await inner.close();
        // Armed in the child processes of the world only, so the test runner itself can exit.
        if (process.env['LOCKKIT_MUTANT_DIR']) setInterval(() => {}, 60_000);
      },
    }),
    async witness(kit) {
      const holder = await spawnHolder(
        { module: childModule, env: kit.childEnv },
        kit.name('leak'),
        { kind: 'mutex', maxCount: 1 },
        20_000,
        { naturalExit: true },
      );
      await holder.release();
      check(await holder.exitsWithin(5000), 'the process did not exit after release and close');
    },
  },
];
