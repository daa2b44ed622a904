/**
 * Deliberately broken in-memory backends. `pnpm mutation` runs the conformance suite
 * against each one and checks that the suite catches it (a suite that cannot fail a
 * broken backend is worthless).
 */
import {
  grantBehind,
  type LockBackend,
  type LockHandle,
  LockProvider,
  MemoryBackend,
  type MemoryGrant,
  MemoryLockStore,
} from '@lockkit/core';

export const mutantNames = [
  'double-grant',
  'silent-loss',
  'stale-token',
  'blind-release',
  'polling-waiter',
] as const;
export type MutantName = (typeof mutantNames)[number];

/** The mutant named by LOCKKIT_MUTANT, if any. */
export function selectedMutant(): MutantName | undefined {
  const name = process.env['LOCKKIT_MUTANT'];
  if (!name) return undefined;
  if (!(mutantNames as readonly string[]).includes(name)) throw new Error(`unknown mutant ${name}`);
  return name as MutantName;
}

const store = new MemoryLockStore();

function mutate(inner: MemoryBackend, mutant: MutantName): LockBackend<MemoryGrant> {
  const base: LockBackend<MemoryGrant> = {
    backend: inner.backend,
    capabilities: inner.capabilities,
    pollIntervalMs: inner.pollIntervalMs,
    tryAcquire: (request, wait) => inner.tryAcquire(request, wait),
    release: (request, grant) => inner.release(request, grant),
    monitor: (request, grant, lose) => inner.monitor(request, grant, lose),
    close: () => inner.close(),
  };
  switch (mutant) {
    case 'double-grant': // lets a second holder in whenever the lock is taken
      return {
        ...base,
        tryAcquire: async (request, wait) =>
          (await inner.tryAcquire(request, { ...wait, deadline: Number.NEGATIVE_INFINITY })) ?? {
            key: 'fake',
            id: -1,
            fencingToken: store.nextToken(store.keyOf(request)),
          },
      };
    case 'silent-loss': // never tells the holder its lock was lost
      return { ...base, monitor: () => () => {} };
    case 'stale-token': // hands out the same fencing token every time
      return {
        ...base,
        tryAcquire: async (request, wait) => {
          const grant = await inner.tryAcquire(request, wait);
          return grant && { ...grant, fencingToken: 1n };
        },
      };
    case 'blind-release': // release deletes whoever holds the key, like a blind DEL
      return {
        ...base,
        release: async (_request, grant) => {
          const holders = store.holders(grant.key);
          for (const id of holders) store.release(grant.key, id);
          return holders.length > 0;
        },
      };
    case 'polling-waiter': // no queue and no notification: waiters poll blindly
      return {
        ...base,
        tryAcquire: (request, wait) =>
          inner.tryAcquire(request, { ...wait, deadline: Number.NEGATIVE_INFINITY }),
      };
  }
}

/** A provider on the mutant backend, with the memory provider's `loseLock` fault hook. */
export function mutantProvider(
  mutant: MutantName,
): LockProvider<MemoryGrant> & { loseLock(handle: LockHandle): void } {
  const inner = new MemoryBackend(store);
  const provider = new LockProvider(mutate(inner, mutant));
  return Object.assign(provider, {
    loseLock: (handle: LockHandle) => inner.evict(grantBehind<MemoryGrant>(handle).grant),
  });
}
