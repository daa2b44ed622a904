import { type LockHandle, ProviderClosedError } from '@lockkit/core';
import { grantBehind, LockProvider } from '@lockkit/core/backend';
import type pg from 'pg';
import type { PostgresGrant } from './postgres-grant.js';
import { PostgresLockBackend } from './postgres-lock-backend.js';
import {
  type PostgresLockProviderOptions,
  resolvePostgresOptions,
} from './postgres-lock-options.js';
import {
  lockInTransaction,
  type TransactionLock,
  type TransactionLockContext,
  type TransactionLockOptions,
} from './transaction-lock.js';

/**
 * Distributed locks on PostgreSQL advisory locks. Session-level locks multiplexed over a
 * few connections (`createLock`, `createReadWriteLock`, `createSemaphore`), plus
 * transaction-scoped locks on a client of yours (`acquireInTransaction`) for PgBouncer
 * transaction pooling.
 */
export class PostgresLockProvider extends LockProvider<PostgresGrant> {
  readonly #postgres: PostgresLockBackend;
  readonly #transactions: TransactionLockContext;
  #closed = false;

  constructor(options: PostgresLockProviderOptions) {
    const resolved = resolvePostgresOptions(options);
    const backend = new PostgresLockBackend(resolved);
    super(backend, { namespace: resolved.namespace, owner: resolved.owner });
    this.#postgres = backend;
    this.#transactions = {
      namespace: resolved.namespace,
      sequence: resolved.fencingSequence,
      ensureSequence: async () => {
        if (this.#closed) throw new ProviderClosedError(this.backend);
        if (backend.sequence.confirmed) return;
        const connection = (await backend.connections.forAttempt(undefined))!;
        try {
          await backend.sequence.ensure(connection);
        } finally {
          connection.unclaim();
        }
      },
    };
  }

  /** PostgreSQL sessions the provider has open right now (shared + waiting). */
  get connectionCount(): number {
    return this.#postgres.connections.size;
  }

  /** `pg_backend_pid()` of the session holding `handle` (for diagnostics and fault tests). */
  backendPidOf(handle: LockHandle): number {
    return grantBehind<PostgresGrant>(handle).grant.connection.pid;
  }

  /**
   * Takes `pg_advisory_xact_lock` (or `_shared` for `kind: 'read'`) inside the open
   * transaction of `client`; it is held until that transaction ends. Rejects with
   * `LockTimeoutError` after `timeout` ms (default: wait forever), with `signal.reason` when
   * aborted; either way the transaction stays usable (a savepoint is rolled back).
   */
  async acquireInTransaction(
    client: pg.ClientBase,
    name: string,
    options?: TransactionLockOptions,
  ): Promise<TransactionLock> {
    return (await lockInTransaction(this.#transactions, client, name, options, true))!;
  }

  /** Like {@link acquireInTransaction}, but `timeout` defaults to 0 and a timeout resolves null. */
  tryAcquireInTransaction(
    client: pg.ClientBase,
    name: string,
    options?: TransactionLockOptions,
  ): Promise<TransactionLock | null> {
    return lockInTransaction(this.#transactions, client, name, options, false);
  }

  override close(): Promise<void> {
    this.#closed = true;
    return super.close();
  }
}

/** Creates a PostgreSQL lock provider. */
export function createPostgresLockProvider(
  options: PostgresLockProviderOptions,
): PostgresLockProvider {
  return new PostgresLockProvider(options);
}
