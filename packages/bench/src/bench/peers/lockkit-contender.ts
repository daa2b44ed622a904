import { createProvider } from '../../backends/provider-factory.js';
import type { ProviderSpec } from '../../backends/provider-spec.js';
import type { Contender } from '../contender.js';

/** lockkit on `spec`'s backend, with the options a user gets by default. */
export function lockkitContender(spec: ProviderSpec): Contender {
  return {
    backend: spec.backend,
    library: 'lockkit',
    lockkit: true,
    waits: true,
    holdsMany: true,
    async open() {
      const provider = await createProvider(spec);
      return {
        async acquire(name) {
          const handle = await provider.createLock(name).acquire();
          return () => handle.release();
        },
        close: () => provider.close(),
      };
    },
  };
}
