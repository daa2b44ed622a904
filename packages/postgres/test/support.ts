import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach } from 'vitest';
import {
  createPostgresLockProvider,
  type PostgresLockProvider,
  type PostgresLockProviderOptions,
} from '../src/index.js';

export { abortedWithin, waitFor } from '@lockkit/conformance';

/** Multiplies timing bounds (slow machines). */
export const timeScale: number = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

/** A unique lock name. */
export function uniqueName(label: string): string {
  return `pg-test:${randomUUID().slice(0, 8)}:${label}`;
}

/** A unique application_name, to find one provider's sessions in pg_stat_activity. */
export function uniqueApplication(): string {
  return `lockkit-test-${randomUUID().slice(0, 8)}`;
}

/**
 * Providers and clients created through these helpers are closed after each test.
 */
export class Harness {
  readonly url: string;
  readonly #providers = new Set<PostgresLockProvider>();
  readonly #clients = new Set<pg.Client>();

  constructor(url: string) {
    this.url = url;
    afterEach(async () => {
      const providers = [...this.#providers];
      this.#providers.clear();
      await Promise.all(providers.map((provider) => provider.close()));
      const clients = [...this.#clients];
      this.#clients.clear();
      await Promise.all(clients.map((client) => client.end().catch(() => {})));
    });
  }

  provider(options: PostgresLockProviderOptions = {}): PostgresLockProvider {
    const provider = createPostgresLockProvider({
      ...(options.pool || options.connection ? {} : { connection: this.url }),
      ...options,
    });
    this.#providers.add(provider);
    return provider;
  }

  /** A plain pg client (an "admin" or "another application"). */
  async client(config: pg.ClientConfig = {}): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, ...config });
    client.on('error', () => {});
    await client.connect();
    this.#clients.add(client);
    return client;
  }
}

/** One row of pg_locks for an advisory bigint key. */
export interface AdvisoryLockRow {
  readonly pid: number;
  readonly mode: string;
  readonly granted: boolean;
}

/** The pg_locks rows of an advisory bigint key (granted and waiting). */
export async function advisoryLocks(
  client: pg.ClientBase,
  key: bigint,
): Promise<AdvisoryLockRow[]> {
  const result = await client.query<AdvisoryLockRow>(
    `SELECT pid, mode, granted FROM pg_locks
     WHERE locktype = 'advisory' AND objsubid = 1
       AND ((classid::bigint << 32) | objid::bigint) = $1::bigint
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
     ORDER BY granted DESC, pid`,
    [key.toString()],
  );
  return result.rows;
}

/** Sessions with this application_name. */
export async function sessionsOf(client: pg.ClientBase, application: string): Promise<number> {
  const result = await client.query<{ count: string }>(
    'SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = $1',
    [application],
  );
  return Number(result.rows[0]!.count);
}
