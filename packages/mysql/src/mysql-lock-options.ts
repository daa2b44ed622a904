import { InvalidArgumentError, type LockProviderOptions } from '@lockkit/core';
import type { ConnectionOptions, Pool } from 'mysql2';

/** A `mysql2` pool, callback (`mysql2`) or promise (`mysql2/promise`) flavour. */
export type MySqlPoolLike = Pool | { readonly pool: Pool };

/** Options of {@link createMySqlLockProvider}. Immutable after construction. */
export interface MySqlLockProviderOptions extends LockProviderOptions {
  /**
   * Where the server is: a `mysql://user:pass@host:port/database` URL or `mysql2` connection
   * options. The provider opens (and closes) its own connections. Exactly one of
   * `connection` and `pool` is required.
   * @defaultValue undefined
   */
  readonly connection?: string | ConnectionOptions | undefined;
  /**
   * An injected `mysql2` pool (callback or promise flavour). The provider borrows
   * connections from it, keeps them while they hold locks, and hands them back; it never
   * ends the pool. Make its `connectionLimit` larger than the number of locks you wait for
   * at once plus `sharedConnections`.
   * @defaultValue undefined
   */
  readonly pool?: MySqlPoolLike | undefined;
  /**
   * Connections that carry non-blocking attempts and releases for many locks at once
   * (multiplexing). A blocking wait always runs on a connection of its own.
   * @defaultValue 4
   */
  readonly sharedConnections?: number | undefined;
  /**
   * Empty wait connections kept open for the next wait (more are closed when they empty).
   * @defaultValue 2
   */
  readonly idleConnections?: number | undefined;
  /**
   * How often (ms) a connection that holds locks is checked with a keepalive query.
   * @defaultValue 5000
   */
  readonly keepaliveIntervalMs?: number | undefined;
  /**
   * Deadline (ms) for a keepalive answer; a late answer counts as a lost connection, and
   * every lock on it is reported lost.
   * @defaultValue 2000
   */
  readonly keepaliveTimeoutMs?: number | undefined;
  /**
   * `wait_timeout` (seconds) set on every lock connection, so the server frees the locks of
   * a client that vanished without closing its socket. Keep it above the keepalive interval.
   * @defaultValue 30
   */
  readonly sessionTimeoutSeconds?: number | undefined;
  /**
   * Where fencing tokens come from. `'table'`: a counter row per lock in `fencingTable`
   * (`INSERT … ON DUPLICATE KEY UPDATE t = LAST_INSERT_ID(t + 1)`; MySQL and MariaDB; one
   * InnoDB write per grant). `'sequence'`: one cached MariaDB `SEQUENCE` named `fencingTable`
   * shared by all locks (MariaDB 10.3+; tokens increase but are not consecutive per lock;
   * nearly free). Every client of a lock must use the same source.
   * @defaultValue 'table'
   */
  readonly fencing?: 'table' | 'sequence' | undefined;
  /**
   * The fencing table (one row per lock, never deleted) or sequence, created on demand in the
   * connection's database. May be qualified: `schema.name`.
   * @defaultValue 'lockkit_fencing_tokens' (table) or 'lockkit_fencing_sequence' (sequence)
   */
  readonly fencingTable?: string | undefined;
  /**
   * Reader slots per read-write lock: at most this many readers hold one RW lock at once
   * (more wait). A writer checks every slot, so keep it modest.
   * @defaultValue 64
   */
  readonly maxReaders?: number | undefined;
  /**
   * Upper bound (ms) on one server-side sleep of a semaphore's head waiter, in case a release
   * could not wake it (e.g. the releaser may not `KILL QUERY` it).
   * @defaultValue 1000
   */
  readonly safetyPollMs?: number | undefined;
}

/** Options after validation and defaults. */
export interface ResolvedMySqlOptions {
  readonly namespace: string;
  readonly connection: string | ConnectionOptions | undefined;
  readonly pool: Pool | undefined;
  readonly sharedConnections: number;
  readonly idleConnections: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly sessionTimeoutSeconds: number;
  readonly fencing: 'table' | 'sequence';
  readonly fencingTable: string;
  readonly maxReaders: number;
  readonly safetyPollMs: number;
}

const knownOptions = new Set([
  'namespace',
  'connection',
  'pool',
  'sharedConnections',
  'idleConnections',
  'keepaliveIntervalMs',
  'keepaliveTimeoutMs',
  'sessionTimeoutSeconds',
  'fencing',
  'fencingTable',
  'maxReaders',
  'safetyPollMs',
]);

const tableName = /^(?:[A-Za-z0-9_$]{1,64}\.)?[A-Za-z0-9_$]{1,64}$/;

/** Validates options (before any I/O) and fills in defaults. */
export function resolveMySqlOptions(options: MySqlLockProviderOptions): ResolvedMySqlOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('MySQL lock provider options must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!knownOptions.has(key)) throw new InvalidArgumentError(`Unknown option "${key}"`);
  }
  const { connection, pool } = options;
  if ((connection === undefined) === (pool === undefined)) {
    throw new InvalidArgumentError('Pass exactly one of `connection` and `pool`');
  }
  if (connection !== undefined && typeof connection !== 'string' && !isObject(connection)) {
    throw new InvalidArgumentError('`connection` must be a URL string or mysql2 options');
  }
  const namespace = options.namespace ?? '';
  if (typeof namespace !== 'string') throw new InvalidArgumentError('`namespace` must be a string');
  const fencing = options.fencing ?? 'table';
  if (fencing !== 'table' && fencing !== 'sequence') {
    throw new InvalidArgumentError("`fencing` must be 'table' or 'sequence'");
  }
  const fencingTable =
    options.fencingTable ??
    (fencing === 'table' ? 'lockkit_fencing_tokens' : 'lockkit_fencing_sequence');
  if (typeof fencingTable !== 'string' || !tableName.test(fencingTable)) {
    throw new InvalidArgumentError(
      '`fencingTable` must be a table name ([A-Za-z0-9_$], optionally schema-qualified)',
    );
  }
  const keepaliveIntervalMs = integer(options, 'keepaliveIntervalMs', 5000, 10, 3_600_000);
  const sessionTimeoutSeconds = integer(options, 'sessionTimeoutSeconds', 30, 1, 31_536_000);
  if (sessionTimeoutSeconds * 1000 <= keepaliveIntervalMs) {
    throw new InvalidArgumentError(
      '`sessionTimeoutSeconds` must be longer than `keepaliveIntervalMs`, or idle holders are cut off',
    );
  }
  return Object.freeze({
    namespace,
    connection,
    pool: pool === undefined ? undefined : unwrapPool(pool),
    sharedConnections: integer(options, 'sharedConnections', 4, 1, 1000),
    idleConnections: integer(options, 'idleConnections', 2, 0, 1000),
    keepaliveIntervalMs,
    keepaliveTimeoutMs: integer(options, 'keepaliveTimeoutMs', 2000, 10, 3_600_000),
    sessionTimeoutSeconds,
    fencing,
    fencingTable,
    maxReaders: integer(options, 'maxReaders', 64, 1, 1024),
    safetyPollMs: integer(options, 'safetyPollMs', 1000, 10, 3_600_000),
  });
}

function unwrapPool(pool: MySqlPoolLike): Pool {
  const candidate = isObject(pool) && 'pool' in pool && isObject(pool.pool) ? pool.pool : pool;
  if (typeof (candidate as Partial<Pool>).getConnection !== 'function') {
    throw new InvalidArgumentError('`pool` must be a mysql2 pool (mysql2 or mysql2/promise)');
  }
  return candidate as Pool;
}

function integer(
  options: MySqlLockProviderOptions,
  key: keyof MySqlLockProviderOptions,
  fallback: number,
  min: number,
  max: number,
): number {
  const value = options[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`\`${key}\` must be an integer from ${min} to ${max}`);
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
