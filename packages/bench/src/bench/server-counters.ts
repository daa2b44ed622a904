import type { ServerHandle } from '@lockkit/testkit';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { fourLetterWord } from '../backends/four-letter-word.js';

/** Server-side request counters by kind (statement text, `Com_*` name, or ZooKeeper packets). */
export type Counters = ReadonlyMap<string, number>;

/** The counters of a server's requests, read by the server itself. */
export interface CounterSource {
  read(): Promise<Counters>;
  close(): Promise<void>;
}

/**
 * PostgreSQL: `pg_stat_statements` calls per normalized statement (the server must preload
 * the extension), and WAL fsyncs. The reading connection's own statements are left out by
 * their text.
 */
export async function postgresCounters(url: string): Promise<CounterSource> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return {
    async read() {
      const result = await client.query<{ query: string; calls: string }>(
        "SELECT query, calls::text FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'",
      );
      const counters = new Map<string, number>();
      for (const row of result.rows) {
        const query = row.query.replace(/\s+/g, ' ').trim();
        counters.set(query, (counters.get(query) ?? 0) + Number(row.calls));
      }
      const wal = await client.query<{ wal_sync: string }>(
        'SELECT wal_sync::text FROM pg_stat_wal',
      );
      counters.set('WAL fsyncs (pg_stat_wal.wal_sync)', Number(wal.rows[0]?.wal_sync ?? 0));
      return counters;
    },
    close: () => client.end(),
  };
}

/** What one {@link mysqlCounters} read adds to the counters (to pass to {@link perSection}). */
export const mysqlReadCost: Counters = new Map([
  ['Com_show_status', 1],
  ['Questions', 1],
]);

/**
 * MariaDB/MySQL: `SHOW GLOBAL STATUS` `Com_*`, `Questions` (minus the reads themselves) and
 * the `*fsync*` counters (`Innodb_data_fsyncs` on MariaDB 10.11: durable commits).
 */
export async function mysqlCounters(url: string): Promise<CounterSource> {
  const connection = await mysql.createConnection(url);
  return {
    async read() {
      const [rows] = await connection.query(
        "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Com\\_%' OR Variable_name = 'Questions' OR Variable_name LIKE '%fsync%'",
      );
      const counters = new Map<string, number>();
      for (const row of rows as { Variable_name: string; Value: string }[]) {
        const value = Number(row.Value);
        if (value > 0) counters.set(row.Variable_name, value);
      }
      return counters;
    },
    close: () => connection.end(),
  };
}

/** ZooKeeper: `mntr` packets received (every request, pings included). */
export function zookeeperCounters(server: ServerHandle): CounterSource {
  return {
    async read() {
      const reply = await fourLetterWord(server.host, server.port, 'mntr');
      const received = Number(/zk_packets_received\s+(\d+)/.exec(reply)?.[1] ?? Number.NaN);
      return new Map([['packets received', received]]);
    },
    close: async () => undefined,
  };
}

/**
 * Per critical section: how much each counter grew between `before` and `after`, divided by
 * `sections`; counters that did not grow are left out, `skip` counts per key are subtracted
 * first (the reads of the counters themselves). Largest first.
 */
export function perSection(
  before: Counters,
  after: Counters,
  sections: number,
  skip: Counters = new Map(),
): [string, number][] {
  const rows: [string, number][] = [];
  for (const [key, value] of after) {
    const grew = value - (before.get(key) ?? 0) - (skip.get(key) ?? 0);
    if (grew > 0 && sections > 0) rows.push([key, grew / sections]);
  }
  return rows.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
