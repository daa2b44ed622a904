import { rmSync } from 'node:fs';
import { createMemoryLockProvider, type MemoryLockProvider, withNamePrefix } from '@lockkit/core';
import { afterAll } from 'vitest';
import { describeLockProvider } from '../src/index.js';
import { selectedMutant } from './mutants/corpus.js';
import { fileLeaseMs, temporaryDirectory, unusableDirectory, worldOf } from './mutants/worlds.js';

const mutant = selectedMutant();
const loseLock = (handle: Parameters<MemoryLockProvider['loseLock']>[0], provider: unknown) =>
  (provider as MemoryLockProvider).loseLock(handle);

if (mutant) {
  // `pnpm mutation` runs this file once per mutant of the corpus (test/mutants/).
  const directory = mutant.backend === 'file' ? temporaryDirectory() : '';
  const blocked = unusableDirectory();
  afterAll(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
    blocked.remove();
  });
  const world = worldOf(mutant, false, directory);
  describeLockProvider({
    name: `${mutant.backend} with mutant "${mutant.name}"`,
    createProvider: (options) => world(options),
    faults: {
      loseLock: (handle, provider) => (provider as ReturnType<typeof world>).loseLock(handle),
    },
    ...(mutant.backend === 'file' && {
      faults: {
        loseLock: (handle, provider) => (provider as ReturnType<typeof world>).loseLock(handle),
        outage: {
          createUnreachableProvider: () => worldOf(mutant, false, blocked.directory)(),
          address: blocked.directory,
        },
      },
      leaseMs: fileLeaseMs,
      childProvider: {
        module: new URL('./mutants/file-child.ts', import.meta.url).href,
        env: { LOCKKIT_MUTANT: mutant.name, LOCKKIT_MUTANT_DIR: directory },
      },
    }),
  });
} else {
  describeLockProvider({
    name: 'memory',
    createProvider: (options) => createMemoryLockProvider(options),
    faults: { loseLock },
  });

  // The same suite through the name-prefix decorator: proves prefixes isolate and wrap cleanly.
  const providers = new WeakMap<object, MemoryLockProvider>();
  describeLockProvider({
    name: 'memory through withNamePrefix',
    createProvider: (options) => {
      const inner = createMemoryLockProvider(options);
      const outer = withNamePrefix(inner, 'tenant-a/');
      providers.set(outer, inner);
      return outer;
    },
    faults: { loseLock: (handle, provider) => providers.get(provider)!.loseLock(handle) },
  });
}
