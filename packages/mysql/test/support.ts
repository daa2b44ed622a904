import type { LockHandle } from '@lockkit/core';
import mysql from 'mysql2/promise';
import { afterEach, inject } from 'vitest';
import {
  createMySqlLockProvider,
  type MySqlLockProvider,
  type MySqlLockProviderOptions,
  mutexKey,
} from '../src/index.js';

export { abortedWithin, waitFor as eventually } from '@lockkit/conformance';

/** Multiplies every timing bound (slow machines: `LOCKKIT_TIME_SCALE=3`). */
export const timeScale: number = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

/** `value` ms scaled by {@link timeScale}. */
export function ms(value: number): number {
  return value * timeScale;
}

/** Pinned name → GET_LOCK name pairs (v1) for the conformance suite's golden case. */
export const goldenKeys: {
  readonly map: (name: string) => string;
  readonly expected: readonly (readonly [string, string])[];
} = {
  map: (name) => mutexKey('', name),
  expected: [
    ['orders:42', 'mutex.orders_42.rienmik5352xot7hresmfk6j2t'],
    ['Orders:42', 'mutex.orders_42.3s2chtsqt7324lcvfyzbj4e2nb'],
    ['', 'mutex.736axzszd6ujbspwk7htfwyv5m'],
  ],
};

/** URL of the shared test server (started by global-setup.ts). */
export function mysqlUrl(): string {
  const url = inject('lockkitServers').mysqlUrl;
  if (!url) throw new Error('the global setup started no MariaDB');
  return url;
}

/** Runs `sql` on a fresh admin connection (to `url`, by default the shared server). */
export async function adminQuery<T>(
  sql: string,
  values: unknown[] = [],
  url: string = mysqlUrl(),
): Promise<T> {
  const connection = await mysql.createConnection(url);
  try {
    const [rows] = await connection.query(sql, values);
    return rows as T;
  } finally {
    await connection.end();
  }
}

/** `KILL <id>`: the server ends that session (and frees its locks). */
export async function killConnection(id: number, url: string = mysqlUrl()): Promise<void> {
  await adminQuery(`KILL ${Number(id)}`, [], url);
}

/** The session holding user lock `key`, or null. */
export async function holderOf(key: string, url: string = mysqlUrl()): Promise<number | null> {
  const rows = await adminQuery<{ holder: number | null }[]>(
    'SELECT IS_USED_LOCK(?) AS holder',
    [key],
    url,
  );
  return rows[0]?.holder ?? null;
}

/** What the given sessions are running now (information_schema.PROCESSLIST). */
export async function statementsOf(
  ids: readonly number[],
  url: string = mysqlUrl(),
): Promise<{ id: number; info: string | null }[]> {
  if (ids.length === 0) return [];
  return adminQuery<{ id: number; info: string | null }[]>(
    `SELECT ID AS id, INFO AS info FROM information_schema.PROCESSLIST WHERE ID IN (${ids.map(Number).join(',')})`,
    [],
    url,
  );
}

const opened: MySqlLockProvider[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((provider) => provider.close()));
});

/** A provider on the shared server (or `options.connection`), closed after the test. */
export function provider(options: Partial<MySqlLockProviderOptions> = {}): MySqlLockProvider {
  const created = createMySqlLockProvider({
    ...(options.pool ? {} : { connection: mysqlUrl() }),
    ...options,
  } as MySqlLockProviderOptions);
  opened.push(created);
  return created;
}

/** A unique lock name. */
export function uniqueName(label: string): string {
  return `${label}:${process.pid}:${Math.random().toString(36).slice(2)}`;
}

/** Releases every handle (ignores nulls). */
export async function releaseAll(handles: readonly (LockHandle | null)[]): Promise<void> {
  for (const handle of handles) await handle?.release();
}
