import type { LockKind } from 'lockkit';
import type { LockTarget } from '../invocation.js';
import { importBeside } from './import-beside.js';
import type { Holder, InspectReport } from './inspect-report.js';
import { addressOf, askServer } from './server-error.js';

/** ms to wait for the server to connect and to answer. */
const serverTimeoutMs = 10_000;

interface PostgresBackendModule {
  advisoryKey(namespace: string, kind: LockKind, name: string): bigint;
  slotKey(semaphoreKey: bigint, slot: number): bigint;
}

interface PgClient {
  on(event: 'error', listener: (error: Error) => void): void;
  connect(): Promise<void>;
  query(sql: string, values: unknown[]): Promise<{ rows: LockRow[] }>;
  end(): Promise<void>;
}

interface PgModule {
  default: {
    Client: new (config: {
      connectionString: string;
      connectionTimeoutMillis: number;
      query_timeout: number;
    }) => PgClient;
  };
}

interface LockRow {
  pid: number;
  mode: string;
  granted: boolean;
  application_name: string | null;
  client_addr: string | null;
  client_port: number | null;
  backend_start: Date | null;
}

// A bigint advisory key shows in pg_locks as classid = high 32 bits, objid = low 32 bits,
// objsubid = 1, in the current database.
const locksSql = `
  SELECT l.pid, l.mode, l.granted, a.application_name, host(a.client_addr) AS client_addr,
         a.client_port, a.backend_start
  FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.objsubid = 1
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND (l.classid::bigint << 32 | l.objid::bigint) = ANY($1::bigint[])
  ORDER BY l.granted DESC, l.pid`;

/**
 * Asks PostgreSQL: the sessions holding (granted) or queued for (not granted) the advisory
 * keys of the lock, with what `pg_stat_activity` knows about them.
 */
export async function inspectPostgres(
  options: Readonly<Record<string, unknown>>,
  name: string,
  target: LockTarget,
  lock: string,
): Promise<InspectReport> {
  const keys = await importBeside<PostgresBackendModule>('postgres', '@lockkit/postgres');
  const pg = await importBeside<PgModule>('postgres', '@lockkit/postgres', 'pg');
  const namespace = typeof options['namespace'] === 'string' ? options['namespace'] : '';
  const base = keys.advisoryKey(namespace, target.kind, name);
  const all =
    target.kind === 'semaphore'
      ? Array.from({ length: target.maxCount }, (_, slot) => keys.slotKey(base, slot))
      : [base];
  const connectionString = String(options['connection']);
  const address = addressOf(connectionString, 5432);
  const client = new pg.default.Client({
    connectionString,
    connectionTimeoutMillis: serverTimeoutMs,
    query_timeout: serverTimeoutMs,
  });
  // An 'error' event without a listener would crash the process; the calls report it.
  client.on('error', () => {});
  let rows: LockRow[];
  try {
    await askServer('PostgreSQL', address, () => client.connect());
    const signed = all.map((key) => BigInt.asIntN(64, key).toString());
    ({ rows } = await askServer('PostgreSQL', address, () => client.query(locksSql, [signed])));
  } finally {
    await client.end().catch(() => {});
  }
  const role = (row: LockRow): string =>
    !row.granted
      ? 'waiting'
      : target.kind === 'semaphore'
        ? 'permit'
        : target.kind === 'mutex'
          ? 'holder'
          : row.mode === 'ShareLock'
            ? 'reader'
            : 'writer';
  const describe = (row: LockRow): Holder => ({
    role: role(row),
    summary:
      `session pid ${row.pid}, application "${row.application_name ?? ''}", client ` +
      `${row.client_addr === null ? 'local socket' : `${row.client_addr}:${row.client_port}`}` +
      (row.backend_start ? `, connected ${row.backend_start.toISOString()}` : ''),
    details: {
      pid: row.pid,
      mode: row.mode,
      applicationName: row.application_name,
      clientAddress: row.client_addr,
      clientPort: row.client_port,
      connectedAt: row.backend_start ? row.backend_start.toISOString() : null,
    },
  });
  return {
    backend: 'postgres',
    lock,
    canTell: true,
    holders: rows.filter((row) => row.granted).map(describe),
    waiters: rows.filter((row) => !row.granted).map(describe),
    notes: [
      'a session holds the locks of every lockkit handle multiplexed onto it; the pid is the server process, not the client',
      ...(target.kind === 'semaphore'
        ? ['semaphore waiters poll instead of queueing on the server, so they are not listed']
        : []),
    ],
  };
}
