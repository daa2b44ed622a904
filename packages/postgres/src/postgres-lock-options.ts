import { InvalidArgumentError } from '@lockkit/core';
import {
  booleanOption,
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  PROVIDER_OPTION_KEYS,
  stringOption,
} from '@lockkit/core/backend';
import type pg from 'pg';

/** Options of {@link createPostgresLockProvider}. Validated at construction, before any I/O. */
export interface PostgresLockProviderOptions extends LockProviderOptions {
  /**
   * Where to connect: a `postgres://` URL or `pg` client options. The provider opens and
   * closes its own connections from it (with `pipeline: true`, TCP keepalive and `application_name` = `applicationName` unless the
   * options say otherwise; its connect timeout is {@link connectTimeoutMs}). Give exactly one
   * of `connection` and `pool`.
   * @defaultValue none (one of `connection` / `pool` is required)
   */
  readonly connection?: string | pg.ClientConfig | undefined;
  /**
   * A `pg.Pool` you own. The provider checks clients out of it and returns them (it never
   * ends the pool). Each waiting acquire, each connection that holds locks and the
   * semaphore listener keeps one client checked out, so give the pool headroom:
   * `max` ≥ `sharedConnections` + `maxWaitConnections` + 1 + what the application needs.
   * @defaultValue none (one of `connection` / `pool` is required)
   */
  readonly pool?: pg.Pool | undefined;
  /**
   * How long (ms) opening a session may take, from the TCP connect to the first answer
   * (a server that is down, unknown, refusing the credentials or hung fails within this);
   * also the budget of cancel requests to a server that does not answer. It sets `pg`'s
   * `connectionTimeoutMillis` (do not give that in `connection`); with `pool`, a checkout
   * that takes longer is given up (and the client returned when it comes). Together with
   * the keepalive it makes `capabilities.unavailableMs`:
   * max(`connectTimeoutMs`, `keepaliveIntervalMs` + `keepaliveTimeoutMs`) + 250.
   * Number in [10, 2^31-1].
   * @defaultValue 5000
   */
  readonly connectTimeoutMs?: number | undefined;
  /**
   * Connections that carry try-locks and unlocks for many held locks at once (multiplexing);
   * opened on demand, when the open ones are busy or hold 500+ locks each. More are opened
   * only when every one already holds the requested key (PostgreSQL would stack the lock on
   * the same session) or keeps a lock it waited for. The server's work per statement grows
   * with the locks one session holds: a process that holds tens of thousands of locks at once
   * should raise this (see the README's caveats). Integer in [1, 100].
   * @defaultValue 4
   */
  readonly sharedConnections?: number | undefined;
  /**
   * Acquires waiting server-side at once (each on its own connection, so no unlock ever
   * queues behind a wait). Further waiters queue in-process, in arrival order.
   * Integer in [1, 1000].
   * @defaultValue 8
   */
  readonly maxWaitConnections?: number | undefined;
  /**
   * An idle connection that holds no lock is closed (or returned to `pool`) after this many
   * ms. Number in [0, 2^31-1].
   * @defaultValue 5000
   */
  readonly idleTimeoutMs?: number | undefined;
  /**
   * Every connection that holds a lock (or awaits an answer) runs `SELECT pg_backend_pid()`
   * this often (ms) to prove the session is alive and unchanged. Number in [10, 2^31-1].
   * @defaultValue 5000
   */
  readonly keepaliveIntervalMs?: number | undefined;
  /**
   * A keepalive not answered within this many ms counts as a lost connection: every lock on
   * it is reported lost and the socket is destroyed. Number in [10, 2^31-1].
   * @defaultValue 5000
   */
  readonly keepaliveTimeoutMs?: number | undefined;
  /**
   * Safety poll (ms) of semaphore waiters, which are otherwise woken by LISTEN/NOTIFY. It is
   * how a waiter learns of a permit freed by a holder whose connection died (PostgreSQL
   * frees it without a notification). Core adds ±20 % jitter. Number in [10, 2^31-1].
   * @defaultValue 500
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * The sequence fencing tokens are drawn from (optionally schema-qualified, as `nextval`
   * reads it). One sequence serves every lock name: it only grows, so each name's tokens
   * strictly increase.
   * @defaultValue 'lockkit_fencing_token'
   */
  readonly fencingSequence?: string | undefined;
  /**
   * Create the fencing sequence (`CREATE SEQUENCE IF NOT EXISTS … CACHE 1`) when it is
   * missing. Set `false` when the application role may not create objects and the sequence
   * was created beforehand.
   * @defaultValue true
   */
  readonly createFencingSequence?: boolean | undefined;
  /**
   * The UNLOGGED table each hold is recorded in (fencing token, key, backend pid, owner,
   * grant time) for `lock.inspect()` and `lock.forceRelease()`: a lowercase identifier,
   * optionally schema-qualified. Created with the fencing sequence when
   * `createFencingSequence` is true; when it is missing and may not be created, holds are
   * not recorded (inspect then reports them from `pg_locks` without token, owner and since).
   * @defaultValue 'lockkit_holds'
   */
  readonly holdsTable?: string | undefined;
  /**
   * Record each hold in `holdsTable` (one insert and one delete per hold, in the statements
   * that lock and unlock: no round trip, but server work). `false`: nothing is recorded or
   * created; inspect reports holds from `pg_locks` without token, owner and since, and
   * forceRelease can only end the holders' sessions.
   * @defaultValue true
   */
  readonly recordHolds?: boolean | undefined;
  /**
   * `application_name` of the connections the provider opens from `connection` (unless the
   * connection options set one), so they are easy to find in `pg_stat_activity`.
   * @defaultValue 'lockkit'
   */
  readonly applicationName?: string | undefined;
}

/** Options after validation and defaults. */
export interface ResolvedPostgresOptions {
  readonly namespace: string;
  readonly connection: pg.ClientConfig | undefined;
  readonly pool: pg.Pool | undefined;
  readonly connectTimeoutMs: number;
  readonly sharedConnections: number;
  readonly maxWaitConnections: number;
  readonly idleTimeoutMs: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly pollIntervalMs: number;
  readonly fencingSequence: string;
  readonly createFencingSequence: boolean;
  readonly holdsTable: string;
  readonly recordHolds: boolean;
  readonly owner: string | undefined;
}

const knownKeys = [
  'namespace',
  'connection',
  'pool',
  'connectTimeoutMs',
  'sharedConnections',
  'maxWaitConnections',
  'idleTimeoutMs',
  'keepaliveIntervalMs',
  'keepaliveTimeoutMs',
  'pollIntervalMs',
  'fencingSequence',
  'createFencingSequence',
  'applicationName',
  'holdsTable',
  'recordHolds',
  ...PROVIDER_OPTION_KEYS,
];

/** Validates options (throws InvalidArgumentError) and fills in defaults. */
export function resolvePostgresOptions(
  options: PostgresLockProviderOptions,
): ResolvedPostgresOptions {
  checkOptionKeys(options, knownKeys, 'PostgreSQL lock provider');
  const namespace = stringOption('namespace', options.namespace, '');
  const applicationName = stringOption('applicationName', options.applicationName, 'lockkit');
  const { pool } = options;
  if ((options.connection === undefined) === (pool === undefined)) {
    throw new InvalidArgumentError('Give exactly one of `connection` (URL or options) and `pool`');
  }
  if (pool !== undefined && !isPool(pool)) {
    throw new InvalidArgumentError('pool must be a pg.Pool');
  }
  const fencingSequence = stringOption(
    'fencingSequence',
    options.fencingSequence,
    'lockkit_fencing_token',
  );
  if (fencingSequence.trim() === '') {
    throw new InvalidArgumentError('fencingSequence must be a non-empty string');
  }
  const createFencingSequence = booleanOption(
    'createFencingSequence',
    options.createFencingSequence,
    true,
  );
  const holdsTable = stringOption('holdsTable', options.holdsTable, 'lockkit_holds');
  if (!/^[a-z_][a-z0-9_]{0,50}(\.[a-z_][a-z0-9_]{0,50})?$/.test(holdsTable)) {
    throw new InvalidArgumentError(
      `holdsTable must be a lowercase identifier, optionally schema-qualified (got ${JSON.stringify(holdsTable)})`,
    );
  }
  const connectTimeoutMs = numberOption('connectTimeoutMs', options.connectTimeoutMs, {
    default: 5000,
    min: 10,
    integer: false,
  });
  return Object.freeze({
    namespace,
    connection: resolveConnection(options.connection, applicationName, connectTimeoutMs),
    pool,
    connectTimeoutMs,
    sharedConnections: numberOption('sharedConnections', options.sharedConnections, {
      default: 4,
      min: 1,
      max: 100,
    }),
    maxWaitConnections: numberOption('maxWaitConnections', options.maxWaitConnections, {
      default: 8,
      min: 1,
      max: 1000,
    }),
    idleTimeoutMs: numberOption('idleTimeoutMs', options.idleTimeoutMs, {
      default: 5000,
      min: 0,
      integer: false,
    }),
    keepaliveIntervalMs: numberOption('keepaliveIntervalMs', options.keepaliveIntervalMs, {
      default: 5000,
      min: 10,
      integer: false,
    }),
    keepaliveTimeoutMs: numberOption('keepaliveTimeoutMs', options.keepaliveTimeoutMs, {
      default: 5000,
      min: 10,
      integer: false,
    }),
    pollIntervalMs: numberOption('pollIntervalMs', options.pollIntervalMs, {
      default: 500,
      min: 10,
      integer: false,
    }),
    fencingSequence,
    createFencingSequence,
    holdsTable,
    recordHolds: booleanOption('recordHolds', options.recordHolds, true),
    owner: options.owner,
  });
}

function resolveConnection(
  connection: PostgresLockProviderOptions['connection'],
  applicationName: string,
  connectTimeoutMs: number,
): pg.ClientConfig | undefined {
  if (connection === undefined) return undefined;
  let config: pg.ClientConfig;
  if (typeof connection === 'string') {
    let url: URL;
    try {
      url = new URL(connection);
    } catch {
      throw new InvalidArgumentError('connection is not a valid URL');
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      throw new InvalidArgumentError('connection must be a postgres:// or postgresql:// URL');
    }
    config = { connectionString: connection };
  } else if (typeof connection === 'object' && connection !== null && !Array.isArray(connection)) {
    config = { ...connection };
    if (config.connectionTimeoutMillis !== undefined) {
      throw new InvalidArgumentError(
        'Set the connect timeout with the `connectTimeoutMs` option, not connection.connectionTimeoutMillis',
      );
    }
  } else {
    throw new InvalidArgumentError('connection must be a URL or pg client options');
  }
  return Object.freeze({
    application_name: applicationName,
    keepAlive: true,
    ...config,
    connectionTimeoutMillis: Math.ceil(connectTimeoutMs),
    pipeline: true,
  });
}

function isPool(value: unknown): value is pg.Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as pg.Pool).connect === 'function' &&
    typeof (value as pg.Pool).end === 'function' &&
    typeof (value as pg.Pool).query === 'function'
  );
}
