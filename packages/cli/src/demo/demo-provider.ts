import { createLockProvider, type ILockProvider, parseLockUrl } from 'lockkit';
import { LEASE_MS } from './inventory-worker.js';

/** `memory` (as the original demo script accepted) → `memory:`; other URLs as they are. */
export function normalizeDemoUrl(url: string): string {
  return url === 'memory' ? 'memory:' : url;
}

/** The demo's provider: lease backends get a short lease unless the URL sets one. */
export function createDemoProvider(url: string): Promise<ILockProvider> {
  const { backend, providerOptions } = parseLockUrl(url);
  const leased = backend === 'file' || backend === 'redis';
  const options = leased && providerOptions['leaseMs'] === undefined ? { leaseMs: LEASE_MS } : {};
  return createLockProvider(url, options);
}
