import {
  type AcquireOptions,
  BackendUnavailableError,
  InvalidArgumentError,
  LockDeadlockError,
  LockTimeoutError,
} from '@lockkit/core';
import { validateAcquireOptions, validateName } from '@lockkit/core/backend';
import pg from 'pg';
import { advisoryKey } from './advisory-keys.js';
import { cancellableQuery } from './cancellable-query.js';
import { describeError, sqlState, sqlStateOf } from './pg-errors.js';
import { tokenOf } from './server-wait.js';

/** The kinds of lock a transaction can hold. */
export type TransactionLockKind = 'mutex' | 'read' | 'write';

/** Options of a transaction-scoped acquire: the usual acquire options plus the kind. */
export interface TransactionLockOptions extends AcquireOptions {
  /**
   * `mutex` (the key of `createLock(name)`), `read` or `write` (the keys of
   * `createReadWriteLock(name)`): session and transaction locks of one name exclude each other.
   * @defaultValue 'mutex'
   */
  readonly kind?: TransactionLockKind | undefined;
}

/** A lock held until the caller's transaction commits or rolls back. */
export interface TransactionLock {
  readonly name: string;
  readonly kind: TransactionLockKind;
  /** Drawn from the provider's fencing sequence after the grant (strictly increasing). */
  readonly fencingToken: bigint;
}

/** What a transaction-scoped acquire needs from its provider. */
export interface TransactionLockContext {
  readonly namespace: string;
  readonly sequence: string;
  ensureSequence(): Promise<void>;
}

const savepoint = 'lockkit_transaction_lock';

/**
 * `pg_advisory_xact_lock[_shared]` on the caller's client, inside the caller's open
 * transaction: released by COMMIT/ROLLBACK, never by us. Works through PgBouncer in
 * transaction pooling mode. A wait runs inside a savepoint with `lock_timeout` set for it;
 * a timeout, abort or error rolls back to the savepoint (which also drops a lock granted in
 * a race) and leaves the caller's transaction usable. Returns null on timeout when
 * `throwOnTimeout` is false.
 */
export async function lockInTransaction(
  context: TransactionLockContext,
  client: pg.ClientBase,
  name: string,
  options: TransactionLockOptions | undefined,
  throwOnTimeout: boolean,
): Promise<TransactionLock | null> {
  validateName(name);
  const { kind = 'mutex', ...acquireOptions } = options ?? {};
  if (kind !== 'mutex' && kind !== 'read' && kind !== 'write') {
    throw new InvalidArgumentError('kind must be "mutex", "read" or "write"');
  }
  const { timeoutMs, signal } = validateAcquireOptions(
    acquireOptions,
    throwOnTimeout ? Infinity : 0,
  );
  if (typeof client?.query !== 'function' || typeof client.getTransactionStatus !== 'function') {
    throw new InvalidArgumentError('client must be a connected pg client');
  }
  if (signal?.aborted) throw signal.reason;
  const status = client.getTransactionStatus();
  if (status !== 'T') {
    throw new InvalidArgumentError(
      `A transaction lock needs an open transaction on the client (BEGIN first); its status is ${String(status)}`,
    );
  }
  await context.ensureSequence();
  const key = advisoryKey(context.namespace, kind, name);
  const lock = kind === 'read' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  const granted = (token: string): TransactionLock => ({ name, kind, fencingToken: BigInt(token) });
  const timedOut = (): null => {
    if (throwOnTimeout) throw new LockTimeoutError(name, timeoutMs);
    return null;
  };
  try {
    if (timeoutMs === 0) {
      // One attempt; if the statement fails the transaction is aborted and so is the lock.
      const result = await client.query<{ token: string | null }>(
        `SELECT CASE WHEN ${lock.replace('pg_', 'pg_try_')}($1::bigint) THEN nextval($2::regclass)::text END AS token`,
        [key.toString(), context.sequence],
      );
      const token = result.rows[0]?.token;
      return token == null ? timedOut() : granted(token);
    }
    const lockTimeout = timeoutMs === Number.POSITIVE_INFINITY ? 0 : Math.ceil(timeoutMs);
    const previous = await client.query<{ lock: string; statement: string }>(
      "SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS statement",
    );
    const outcome = await cancellableQuery(
      client,
      client
        .query(
          `SAVEPOINT ${savepoint}; SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = ${lockTimeout}; ` +
            `SELECT ${lock}('${key}'::bigint), nextval(${pg.escapeLiteral(context.sequence)}::regclass)::text AS token`,
        )
        .then((results) => tokenOf(results)),
      signal,
      () => destroy(client),
    );
    if (outcome.ok && !signal?.aborted) {
      const settings = previous.rows[0]!;
      await client.query(
        `SELECT set_config('lock_timeout', ${pg.escapeLiteral(settings.lock)}, true), ` +
          `set_config('statement_timeout', ${pg.escapeLiteral(settings.statement)}, true); ` +
          `RELEASE SAVEPOINT ${savepoint}`,
      );
      return granted(outcome.value);
    }
    // Timed out, cancelled, failed, or granted after the caller gave up: undo it all.
    await client.query(`ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`);
    if (outcome.ok || signal?.aborted) throw signal?.reason;
    const state = sqlStateOf(outcome.error);
    if (state === sqlState.lockNotAvailable) return timedOut();
    if (state === sqlState.deadlockDetected) throw new LockDeadlockError(name, outcome.error);
    throw outcome.error;
  } catch (error) {
    if (
      error === signal?.reason ||
      LockTimeoutError.isInstance(error) ||
      LockDeadlockError.isInstance(error)
    ) {
      throw error;
    }
    throw new BackendUnavailableError(
      `Transaction lock "${name}" failed: ${describeError(error)}`,
      { lockName: name, cause: error },
    );
  }
}

function destroy(client: pg.ClientBase): void {
  (client as pg.Client).connection?.stream?.destroy();
}
