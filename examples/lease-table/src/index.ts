import { LockProvider } from '@lockkit/core/backend';
import { type LeaseGrant, LeaseTableBackend } from './lease-backend.js';
import { type LeaseTableOptions, resolveOptions } from './lease-options.js';

export { type LeaseGrant, LeaseTableBackend, leaseKey } from './lease-backend.js';
export type { LeaseTableOptions, ResolvedLeaseTableOptions } from './lease-options.js';

/**
 * A lockkit provider on a PostgreSQL table of leases (created on first use). Options are
 * checked before any I/O.
 */
export function createLeaseTableLockProvider(options: LeaseTableOptions): LockProvider<LeaseGrant> {
  const resolved = resolveOptions(options);
  return new LockProvider(new LeaseTableBackend(resolved), { namespace: resolved.namespace });
}
