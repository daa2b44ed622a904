import { InvalidArgumentError } from '@lockkit/core';
import {
  booleanOption,
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  PROVIDER_OPTION_KEYS,
  stringOption,
} from '@lockkit/core/backend';
import type { ConnectionOptions, Pool } from 'mysql2';

/** The `owner` label is recorded in a `BLOB` column (`lockkit_holds`). */
const MAX_OWNER_BYTES = 65_535;

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
   * How long (ms) opening a session may take: TCP connect, handshake, login and the session
   * set-up (a server that is down, unknown, refusing the credentials or hung fails within
   * this). It sets `mysql2`'s `connectTimeout` (do not give that in `connection`); with
   * `pool`, a checkout that takes longer is given up. Together with the keepalive it makes
   * `capabilities.unavailableMs`:
   * max(`connectTimeoutMs`, `keepaliveIntervalMs` + `keepaliveTimeoutMs`) + 250.
   * Integer in [10, 3 600 000].
   * @defaultValue 5000
   */
  readonly connectTimeoutMs?: number | undefined;
  /**
   * Connections that carry non-blocking attempts and releases for many locks at once
   * (multiplexing); opened on demand, while the open ones are busy or hold 500+ locks each.
   * A blocking wait always runs on a connection of its own. The server's work
   * per statement grows with the locks one session holds: a process that holds tens of
   * thousands of locks at once should raise this (see the README's caveats).
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
   * Where fencing tokens come from; every client of a lock must use the same source.
   * - `'blocks'`: one counter for all locks in a one-row `MEMORY` table, handing out numbers
   *   up to a ceiling reserved durably in InnoDB, 10,000 per commit (MySQL and MariaDB). No
   *   disk write per grant, and tokens never rewind: a restart or crash empties the `MEMORY`
   *   table and drawing resumes above the last reservation. Tokens increase across all locks
   *   and jump by up to 10,000 after a restart.
   * - `'table'`: a counter row per lock (`INSERT … ON DUPLICATE KEY UPDATE t =
   *   LAST_INSERT_ID(t + 1)`); tokens count 1, 2, 3 … per lock; one InnoDB commit, so one log
   *   flush on a durable server, per grant. For servers that refuse `MEMORY` tables (MySQL
   *   Group Replication).
   * - `'sequence'`: one cached MariaDB `SEQUENCE` (MariaDB 10.3+), cheap, but a server crash can
   *   hand out again tokens drawn in the last moments before it: MariaDB writes a sequence's new
   *   value to disk some time after `NEXTVAL` returned it.
   * - `'auto'`: the sequence on MariaDB 10.3+, the table elsewhere.
   * @defaultValue 'blocks'
   */
  readonly fencing?: 'blocks' | 'auto' | 'table' | 'sequence' | undefined;
  /**
   * The fencing table (one row per lock, never deleted) or sequence, created on demand in the
   * connection's database; `'blocks'` uses `<name>_live` and `<name>_blocks`, and seeds its
   * first reservation from `<name>` when that `'table'` counter exists. May be qualified:
   * `schema.name`.
   * @defaultValue 'lockkit_fencing_tokens' ('blocks', 'table') or 'lockkit_fencing_sequence' (sequence)
   */
  readonly fencingTable?: string | undefined;
  /**
   * Record each hold (owner, token, grant time, session) in the `lockkit_holds` table, for
   * `inspect()` and `forceRelease()` (docs/backends/mysql.md, "Inspecting and breaking a
   * lock"). One more statement per grant; `false` turns it off.
   * @defaultValue true
   */
  readonly recordHolds?: boolean | undefined;
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
  readonly connectTimeoutMs: number;
  readonly sharedConnections: number;
  readonly idleConnections: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly sessionTimeoutSeconds: number;
  readonly fencing: 'blocks' | 'auto' | 'table' | 'sequence';
  /** Undefined: each source's default name. */
  readonly fencingTable: string | undefined;
  readonly recordHolds: boolean;
  readonly maxReaders: number;
  readonly safetyPollMs: number;
  /** The provider's owner label (checked by core's LockProvider). */
  readonly owner: string | undefined;
}

const knownOptions = [
  'namespace',
  'connection',
  'pool',
  'connectTimeoutMs',
  'sharedConnections',
  'idleConnections',
  'keepaliveIntervalMs',
  'keepaliveTimeoutMs',
  'sessionTimeoutSeconds',
  'fencing',
  'fencingTable',
  'recordHolds',
  'maxReaders',
  'safetyPollMs',
  ...PROVIDER_OPTION_KEYS,
];

const tableName = /^(?:[A-Za-z0-9_$]{1,64}\.)?[A-Za-z0-9_$]{1,64}$/;

/** Validates options (before any I/O) and fills in defaults. */
export function resolveMySqlOptions(options: MySqlLockProviderOptions): ResolvedMySqlOptions {
  checkOptionKeys(options, knownOptions, 'MySQL lock provider');
  const { connection, pool } = options;
  if ((connection === undefined) === (pool === undefined)) {
    throw new InvalidArgumentError('Pass exactly one of `connection` and `pool`');
  }
  if (connection !== undefined && typeof connection !== 'string' && !isObject(connection)) {
    throw new InvalidArgumentError('`connection` must be a URL string or mysql2 options');
  }
  if (setsConnectTimeout(connection)) {
    throw new InvalidArgumentError(
      'Set the connect timeout with the `connectTimeoutMs` option, not in `connection`',
    );
  }
  const namespace = stringOption('namespace', options.namespace, '');
  if (typeof options.owner === 'string' && Buffer.byteLength(options.owner) > MAX_OWNER_BYTES) {
    throw new InvalidArgumentError(
      `\`owner\` must be at most ${MAX_OWNER_BYTES} UTF-8 bytes (the BLOB it is recorded in)`,
    );
  }
  const fencing = options.fencing ?? 'blocks';
  if (!['blocks', 'auto', 'table', 'sequence'].includes(fencing)) {
    throw new InvalidArgumentError("`fencing` must be 'blocks', 'auto', 'table' or 'sequence'");
  }
  const fencingTable =
    options.fencingTable === undefined
      ? undefined
      : stringOption('fencingTable', options.fencingTable, '');
  if (fencingTable !== undefined && !tableName.test(fencingTable)) {
    throw new InvalidArgumentError(
      '`fencingTable` must be a table name ([A-Za-z0-9_$], optionally schema-qualified)',
    );
  }
  const keepaliveIntervalMs = numberOption('keepaliveIntervalMs', options.keepaliveIntervalMs, {
    default: 5000,
    min: 10,
    max: 3_600_000,
  });
  const sessionTimeoutSeconds = numberOption(
    'sessionTimeoutSeconds',
    options.sessionTimeoutSeconds,
    { default: 30, min: 1, max: 31_536_000 },
  );
  if (sessionTimeoutSeconds * 1000 <= keepaliveIntervalMs) {
    throw new InvalidArgumentError(
      '`sessionTimeoutSeconds` must be longer than `keepaliveIntervalMs`, or idle holders are cut off',
    );
  }
  return Object.freeze({
    namespace,
    owner: options.owner,
    connection,
    pool: pool === undefined ? undefined : unwrapPool(pool),
    connectTimeoutMs: numberOption('connectTimeoutMs', options.connectTimeoutMs, {
      default: 5000,
      min: 10,
      max: 3_600_000,
    }),
    sharedConnections: numberOption('sharedConnections', options.sharedConnections, {
      default: 4,
      min: 1,
      max: 1000,
    }),
    idleConnections: numberOption('idleConnections', options.idleConnections, {
      default: 2,
      min: 0,
      max: 1000,
    }),
    keepaliveIntervalMs,
    keepaliveTimeoutMs: numberOption('keepaliveTimeoutMs', options.keepaliveTimeoutMs, {
      default: 2000,
      min: 10,
      max: 3_600_000,
    }),
    sessionTimeoutSeconds,
    fencing,
    fencingTable,
    recordHolds: booleanOption('recordHolds', options.recordHolds, true),
    maxReaders: numberOption('maxReaders', options.maxReaders, { default: 64, min: 1, max: 1024 }),
    safetyPollMs: numberOption('safetyPollMs', options.safetyPollMs, {
      default: 1000,
      min: 10,
      max: 3_600_000,
    }),
  });
}

function unwrapPool(pool: MySqlPoolLike): Pool {
  const candidate = isObject(pool) && 'pool' in pool && isObject(pool.pool) ? pool.pool : pool;
  if (typeof (candidate as Partial<Pool>).getConnection !== 'function') {
    throw new InvalidArgumentError('`pool` must be a mysql2 pool (mysql2 or mysql2/promise)');
  }
  return candidate as Pool;
}

function setsConnectTimeout(connection: string | ConnectionOptions | undefined): boolean {
  if (connection === undefined) return false;
  if (typeof connection !== 'string') {
    if (connection.connectTimeout !== undefined) return true;
    if (connection.uri === undefined) return false;
    connection = connection.uri;
  }
  try {
    return new URL(connection).searchParams.has('connectTimeout');
  } catch {
    throw new InvalidArgumentError('`connection` is not a valid URL');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
