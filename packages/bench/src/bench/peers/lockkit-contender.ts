import { createProvider } from '../../backends/provider-factory.js';
import type { ProviderSpec, ProviderVariant } from '../../backends/provider-spec.js';
import type { Contender } from '../contender.js';

/**
 * lockkit on `spec`'s backend, with the options a user gets by default, or (`variant`) with
 * those options switched: the row is then labelled with them, e.g. `lockkit (recordHolds: false)`.
 */
export function lockkitContender(spec: ProviderSpec, variant?: ProviderVariant): Contender {
  const switched = Object.entries(variant ?? {}).map(
    ([key, value]) => `${key}: ${typeof value === 'string' ? `'${value}'` : String(value)}`,
  );
  return {
    backend: spec.backend,
    library: variant ? `lockkit (${switched.join(', ')})` : 'lockkit',
    lockkit: true,
    waits: true,
    holdsMany: true,
    ...(variant ? { variant: true } : {}),
    async open() {
      const provider = await createProvider(variant ? { ...spec, options: variant } : spec);
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
