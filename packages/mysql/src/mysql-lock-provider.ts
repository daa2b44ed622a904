import type { LockHandle } from '@lockkit/core';
import { grantBehind, LockProvider } from '@lockkit/core/backend';
import { type MySqlGrant, MySqlLockBackend } from './mysql-lock-backend.js';
import { type MySqlLockProviderOptions, resolveMySqlOptions } from './mysql-lock-options.js';

/**
 * Locks on MySQL/MariaDB user locks (`GET_LOCK`): mutex, read-write lock (writer
 * preference), semaphore; fencing tokens from a counter table; lost signal when the
 * holding session goes away.
 */
export class MySqlLockProvider extends LockProvider<MySqlGrant> {
  readonly #mysql: MySqlLockBackend;

  constructor(options: MySqlLockProviderOptions) {
    const resolved = resolveMySqlOptions(options);
    const backend = new MySqlLockBackend(resolved);
    super(backend, { namespace: resolved.namespace, owner: resolved.owner });
    this.#mysql = backend;
  }

  /**
   * The server's `CONNECTION_ID()` of the session holding `handle` — for operations and
   * fault injection (`KILL <id>` from another session makes the handle's signal abort).
   */
  connectionIdOf(handle: LockHandle): number {
    return grantBehind<MySqlGrant>(handle).grant.connection.id;
  }

  /** `CONNECTION_ID()`s of the sessions this provider has open. */
  get connectionIds(): readonly number[] {
    return this.#mysql.connections.connectionIds;
  }
}

/**
 * Creates a MySQL/MariaDB lock provider.
 *
 * @example
 * ```ts
 * const locks = createMySqlLockProvider({ connection: 'mysql://app:secret@db/app' });
 * await using handle = await locks.createLock('orders:42').acquire({ timeout: 5000 });
 * await saveOrder({ fencingToken: handle.fencingToken });
 * ```
 */
export function createMySqlLockProvider(options: MySqlLockProviderOptions): MySqlLockProvider {
  return new MySqlLockProvider(options);
}
