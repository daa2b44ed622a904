import type { LockKind } from 'lockkit';
import type { LockTarget } from '../invocation.js';
import { importBeside } from './import-beside.js';
import type { Holder, InspectReport } from './inspect-report.js';
import { addressOf, askServer } from './server-error.js';

/** ms to wait for the server to connect. */
const serverTimeoutMs = 10_000;

interface MySqlBackendModule {
  lockKeys(request: {
    readonly name: string;
    readonly namespace: string;
    readonly kind: LockKind;
    readonly maxCount: number;
  }): { readonly base: string; readonly gate: string; slot(index: number): string };
}

interface MySqlConnection {
  on(event: 'error', listener: (error: Error) => void): void;
  query(sql: string, values: unknown[]): Promise<[unknown, unknown]>;
  end(): Promise<void>;
}

interface MySqlModule {
  default: {
    createConnection(config: { uri: string; connectTimeout: number }): Promise<MySqlConnection>;
  };
}

interface ProcessRow {
  ID: number;
  USER: string;
  HOST: string;
  DB: string | null;
  TIME: number;
}

/**
 * Asks the server which sessions hold the lock's `GET_LOCK` names (`IS_USED_LOCK`), and what
 * `information_schema.PROCESSLIST` knows about them.
 */
export async function inspectMySql(
  options: Readonly<Record<string, unknown>>,
  name: string,
  target: LockTarget,
  lock: string,
): Promise<InspectReport> {
  const { lockKeys } = await importBeside<MySqlBackendModule>('mysql', '@lockkit/mysql');
  const mysql = await importBeside<MySqlModule>('mysql', '@lockkit/mysql', 'mysql2/promise');
  const namespace = typeof options['namespace'] === 'string' ? options['namespace'] : '';
  const maxReaders = typeof options['maxReaders'] === 'number' ? options['maxReaders'] : 64;
  const maxCount = target.kind === 'semaphore' ? target.maxCount : 1;
  const keys = lockKeys({ name, namespace, kind: target.kind, maxCount });
  // Which GET_LOCK names mean what (see @lockkit/mysql's README: gate, reader slots, permits).
  const roles: [string, string][] =
    target.kind === 'mutex'
      ? [[keys.base, 'holder']]
      : target.kind === 'semaphore'
        ? Array.from({ length: maxCount }, (_, index) => [keys.slot(index), 'permit'])
        : [
            [keys.gate, 'writer'],
            ...Array.from({ length: maxReaders }, (_, index): [string, string] => [
              keys.slot(index),
              'reader',
            ]),
          ];
  const uri = String(options['connection']);
  const address = addressOf(uri, 3306);
  const connection = await askServer('MySQL', address, () =>
    mysql.default.createConnection({ uri, connectTimeout: serverTimeoutMs }),
  );
  // An 'error' event without a listener would crash the process; the queries report it.
  connection.on('error', () => {});
  const holders: Holder[] = [];
  const ask = <T>(sql: string, values: unknown[]): Promise<T> =>
    askServer('MySQL', address, async () => (await connection.query(sql, values))[0] as T);
  try {
    const owners = await ask<Record<string, number | null>[]>(
      `SELECT ${roles.map((_, index) => `IS_USED_LOCK(?) AS k${index}`).join(', ')}`,
      roles.map(([key]) => key),
    );
    const row = owners[0] ?? {};
    const held = roles.flatMap(([, role], index) => {
      const id = row[`k${index}`];
      return id === null || id === undefined ? [] : [{ role, id: Number(id) }];
    });
    if (held.length === 0) return report(lock, []);
    const rows = await ask<ProcessRow[]>(
      'SELECT ID, USER, HOST, DB, TIME FROM information_schema.PROCESSLIST WHERE ID IN (?)',
      [held.map(({ id }) => id)],
    );
    for (const { role, id } of held) {
      const row = rows.find((candidate) => Number(candidate.ID) === id);
      holders.push({
        role,
        summary: row
          ? `connection ${id}, user ${row.USER}, from ${row.HOST}, database ${row.DB ?? '-'}`
          : `connection ${id}`,
        details: {
          connectionId: id,
          user: row?.USER ?? null,
          host: row?.HOST ?? null,
          database: row?.DB ?? null,
        },
      });
    }
  } finally {
    await connection.end().catch(() => {});
  }
  return report(lock, holders);
}

function report(lock: string, holders: Holder[]): InspectReport {
  return {
    backend: 'mysql',
    lock,
    canTell: true,
    holders,
    waiters: [],
    notes: [
      'a connection holds the locks of every lockkit handle multiplexed onto it; waiters are not listed',
    ],
  };
}
