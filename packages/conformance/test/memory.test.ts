import { createMemoryLockProvider, type MemoryLockProvider, withNamePrefix } from '@lockkit/core';
import { describeLockProvider } from '../src/index.js';
import { mutantProvider, selectedMutant } from './mutants.js';

const mutant = selectedMutant();
const loseLock = (handle: Parameters<MemoryLockProvider['loseLock']>[0], provider: unknown) =>
  (provider as MemoryLockProvider).loseLock(handle);

if (mutant) {
  describeLockProvider({
    name: `memory with mutant "${mutant}"`,
    createProvider: () => mutantProvider(mutant),
    faults: {
      loseLock: (handle, provider) =>
        (provider as ReturnType<typeof mutantProvider>).loseLock(handle),
    },
  });
} else {
  describeLockProvider({
    name: 'memory',
    createProvider: () => createMemoryLockProvider(),
    faults: { loseLock },
  });

  // The same suite through the name-prefix decorator: proves prefixes isolate and wrap cleanly.
  const providers = new WeakMap<object, MemoryLockProvider>();
  describeLockProvider({
    name: 'memory through withNamePrefix',
    createProvider: () => {
      const inner = createMemoryLockProvider();
      const outer = withNamePrefix(inner, 'tenant-a/');
      providers.set(outer, inner);
      return outer;
    },
    faults: { loseLock: (handle, provider) => providers.get(provider)!.loseLock(handle) },
  });
}
