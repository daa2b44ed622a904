import type { LockHandle } from '@lockkit/core';
import { grantBehind, LockProvider } from '@lockkit/core/backend';
import type { Etcd3 } from 'etcd3';
import { type EtcdGrant, EtcdLockBackend } from './etcd-lock-backend.js';
import { type EtcdLockProviderOptions, resolveOptions } from './etcd-options.js';

/**
 * Locks on etcd: FIFO mutex, read-write lock and semaphore on keys attached to one lease per
 * provider, ordered by create revision, with the key's create revision as fencing token. Adds
 * fault hooks for tests to the common {@link LockProvider}.
 */
export class EtcdLockProvider extends LockProvider<EtcdGrant> {
  readonly #etcd: EtcdLockBackend;

  constructor(options: EtcdLockProviderOptions) {
    const resolved = resolveOptions(options);
    const backend = new EtcdLockBackend(resolved);
    super(backend, { namespace: resolved.namespace, owner: resolved.owner });
    this.#etcd = backend;
  }

  /** The etcd key behind `handle` (for inspection and tests). */
  keyOf(handle: LockHandle): string {
    return grantBehind<EtcdGrant>(handle).grant.key;
  }

  /** The `etcd3` client the provider talks through (for inspection and tests). */
  get client(): Etcd3 {
    return this.#etcd.connection.client;
  }

  /** The ID of the current session's lease, if one is granted (for inspection and tests). */
  get leaseId(): string | undefined {
    const session = this.#etcd.sessions.peek();
    return session && !session.lost ? session.id : undefined;
  }

  /**
   * Fault injection: deletes the key behind `handle` as an operator or another client would,
   * without telling the handle. Its `signal` then aborts with `LockLostError`.
   */
  async loseLock(handle: LockHandle): Promise<void> {
    const { grant } = grantBehind<EtcdGrant>(handle);
    await this.client.delete().key(grant.key);
  }

  /**
   * Fault injection: revokes the session's lease from the server side, as its expiry after a
   * partition longer than the TTL would. Every handle of the provider loses its lock; the next
   * acquire gets a new lease.
   */
  async expireSession(): Promise<void> {
    const session = this.#etcd.sessions.peek();
    if (!session || session.lost) return;
    const deadline = new Date(Date.now() + 5000);
    await this.client.leaseClient.leaseRevoke({ ID: session.id }, { deadline });
  }
}

/**
 * Creates an etcd lock provider. Options are validated here, before any I/O; the first
 * acquire connects and grants the provider's lease.
 *
 * @example
 * ```ts
 * const locks = createEtcdLockProvider({ hosts: 'etcd-0:2379,etcd-1:2379,etcd-2:2379' });
 * await using handle = await locks.createLock('invoice:42').acquire({ timeout: 5000 });
 * await store.write(invoice, { fencingToken: handle.fencingToken });
 * ```
 */
export function createEtcdLockProvider(options: EtcdLockProviderOptions): EtcdLockProvider {
  return new EtcdLockProvider(options);
}
