/**
 * Side-by-side benchmark: lockkit's PostgreSQL provider vs raw advisory-lock calls on `pg`
 * and vs the `advisory-lock` npm package. Prints one table.
 *
 *   pnpm --filter @lockkit/postgres bench            (starts a throwaway server)
 *   LOCKKIT_POSTGRES_URL=postgres://… pnpm --filter @lockkit/postgres bench
 */
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPostgres } from '@lockkit/testkit';
import pg from 'pg';
import {
  advisoryKey,
  createPostgresLockProvider,
  PostgresLockBackend,
  resolvePostgresOptions,
} from '../src/index.js';

const require = createRequire(import.meta.url);
const advisoryLock = (require('advisory-lock') as { default: AdvisoryLockFactory }).default;
type AdvisoryLockFactory = (url: string) => (name: string) => {
  tryLock(): Promise<(() => Promise<void>) | undefined>;
};

const rows: [string, string, string][] = [];
const record = (metric: string, subject: string, value: string): void => {
  rows.push([metric, subject, value]);
  console.error(`  ${metric} | ${subject} | ${value}`);
};

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Ops per second of each variant, run back to back for `ms` per round. Variants take turns
 * (round-robin, `rounds` rounds) so they see the same machine load; the best round counts.
 */
async function interleaved(
  variants: Record<string, () => Promise<unknown>>,
  rounds = 5,
  ms = 1000,
): Promise<Record<string, number>> {
  const best: Record<string, number> = {};
  for (const op of Object.values(variants)) for (let i = 0; i < 200; i++) await op(); // warm up
  for (let round = 0; round < rounds; round++) {
    for (const [name, op] of Object.entries(variants)) {
      let count = 0;
      const started = performance.now();
      while (performance.now() - started < ms) {
        await op();
        count += 1;
      }
      best[name] = Math.max(best[name] ?? 0, (count * 1000) / (performance.now() - started));
    }
  }
  return best;
}

async function main(): Promise<void> {
  // LOCKKIT_POSTGRES_URL, if set, names the server; otherwise a throwaway one is started.
  // advisory-lock opens (and ends, without waiting) a connection per lock: leave it room.
  const server = await startPostgres({
    settings: { max_locks_per_transaction: '256', max_connections: '300' },
  });
  const url = server.url;
  try {
    await uncontended(url);
    await handoff(url);
    await workers(url);
    await manyHeld(url);
  } finally {
    await server.stop();
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length), 8));
  const line = (row: string[]): string =>
    `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(['metric', 'subject', 'result']));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

async function uncontended(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const key = advisoryKey('', 'mutex', 'bench-raw').toString();
  const provider = createPostgresLockProvider({ connection: url });
  const lock = provider.createLock('bench-lockkit');
  // The backend alone (no core provider around it): what the SQL and multiplexing cost.
  const backend = new PostgresLockBackend(resolvePostgresOptions({ connection: url }));
  const request = { name: 'bench-backend', namespace: '', kind: 'mutex', maxCount: 1 } as const;
  const once = {
    signal: new AbortController().signal,
    deadline: Number.NEGATIVE_INFINITY,
    waiting: () => {},
  };
  const mutex = advisoryLock(url)('bench-advisory-lock');
  const result = await interleaved({
    raw: async () => {
      await client.query('SELECT pg_try_advisory_lock($1::bigint)', [key]);
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    },
    prepared: async () => {
      await client.query({
        name: 'b1',
        text: 'SELECT pg_try_advisory_lock($1::bigint)',
        values: [key],
      });
      await client.query({
        name: 'b2',
        text: 'SELECT pg_advisory_unlock($1::bigint)',
        values: [key],
      });
    },
    lockkit: async () => {
      const handle = await lock.tryAcquire();
      await handle!.release();
    },
    backend: async () => {
      const grant = await backend.tryAcquire(request, once);
      await backend.release(request, grant!);
    },
    packaged: async () => {
      const unlock = await mutex.tryLock();
      await unlock!();
    },
  });
  await client.end();
  await provider.close();
  await backend.close();
  const raw = result['raw']!;
  const share = (value: number): string =>
    `${value.toFixed(0)} (${((value / raw) * 100).toFixed(0)} % of raw)`;
  const metric = 'uncontended try+release, ops/s';
  record(metric, 'raw pg_try_advisory_lock + unlock (1 conn)', raw.toFixed(0));
  record(metric, 'raw, prepared statements (1 conn)', share(result['prepared']!));
  record(metric, 'lockkit tryAcquire + release (with token)', share(result['lockkit']!));
  record(metric, 'lockkit backend alone (no core provider)', share(result['backend']!));
  record(metric, 'advisory-lock 2.0.0 tryLock + unlock', share(result['packaged']!));
}

async function handoff(url: string): Promise<void> {
  const rounds = 300;
  // Raw: B blocks in pg_advisory_lock on its connection, A unlocks.
  const [a, b] = [
    new pg.Client({ connectionString: url }),
    new pg.Client({ connectionString: url }),
  ];
  await a.connect();
  await b.connect();
  const key = advisoryKey('', 'mutex', 'bench-handoff-raw').toString();
  const raw: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await a.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    const granted = b
      .query('SELECT pg_advisory_lock($1::bigint)', [key])
      .then(() => performance.now());
    await sleep(2);
    const released = performance.now();
    void a.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    raw.push((await granted) - released);
    await b.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
  }
  await a.end();
  await b.end();
  // lockkit: two providers (two processes' worth of connections).
  const [p1, p2] = [
    createPostgresLockProvider({ connection: url }),
    createPostgresLockProvider({ connection: url }),
  ];
  const [l1, l2] = [p1.createLock('bench-handoff'), p2.createLock('bench-handoff')];
  const lockkit: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const held = await l1.acquire();
    const granted = l2.acquire().then((handle) => ({ handle, at: performance.now() }));
    await sleep(2);
    const released = performance.now();
    void held.release();
    const { handle, at } = await granted;
    lockkit.push(at - released);
    await handle.release();
  }
  await p1.close();
  await p2.close();
  const format = (samples: number[]): string =>
    `p50 ${percentile(samples, 50).toFixed(2)} ms, p99 ${percentile(samples, 99).toFixed(2)} ms`;
  record('two-client handoff (release → grant)', 'raw pg_advisory_lock / unlock', format(raw));
  record('two-client handoff (release → grant)', 'lockkit acquire / release', format(lockkit));
}

async function workers(url: string): Promise<void> {
  const roundMs = 2000;
  const hold = (): Promise<void> => sleep(1);
  const key = advisoryKey('', 'mutex', 'bench-workers-raw').toString();
  /** Acquisitions per second of 8 workers: lock, 1 ms, unlock, 1 ms, for `roundMs`. */
  const run = async (
    acquire: (worker: number) => Promise<() => Promise<unknown>>,
  ): Promise<number> => {
    let count = 0;
    const until = performance.now() + roundMs;
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        while (performance.now() < until) {
          const release = await acquire(worker);
          count += 1;
          await hold();
          await release();
          await hold();
        }
      }),
    );
    return (count * 1000) / roundMs;
  };
  // Raw: 8 connections, each looping blocking pg_advisory_lock / pg_advisory_unlock.
  const clients = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const shared = createPostgresLockProvider({ connection: url });
  const separate = Array.from({ length: 8 }, () => createPostgresLockProvider({ connection: url }));
  const variants: Record<string, (worker: number) => Promise<() => Promise<unknown>>> = {
    raw: async (worker) => {
      const client = clients[worker]!;
      await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      return () => client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    },
    shared: async () => {
      const handle = await shared.createLock('bench-workers').acquire();
      return () => handle.release();
    },
    separate: async (worker) => {
      const handle = await separate[worker]!.createLock('bench-workers').acquire();
      return () => handle.release();
    },
  };
  const best: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    for (const [name, acquire] of Object.entries(variants)) {
      best[name] = Math.max(best[name] ?? 0, await run(acquire));
    }
  }
  await Promise.all(clients.map((client) => client.end()));
  await Promise.all([shared, ...separate].map((provider) => provider.close()));
  const raw = best['raw']!;
  const share = (value: number): string =>
    `${value.toFixed(0)} (${((value / raw) * 100).toFixed(0)} % of raw)`;
  const metric = '8 workers, 1 ms hold / 1 ms think, acquisitions/s';
  record(metric, 'raw blocking pg_advisory_lock loops (8 conns)', raw.toFixed(0));
  record(metric, 'lockkit, one provider', share(best['shared']!));
  record(metric, 'lockkit, a provider per worker', share(best['separate']!));
}

async function manyHeld(url: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const application = `lockkit-bench-${process.pid}`;
  const provider = createPostgresLockProvider({ connection: url, applicationName: application });
  const warm = await provider.createLock('bench-warm').acquire();
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  const handles = [];
  for (let batch = 0; batch < 20; batch++) {
    handles.push(
      ...(await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          provider.createLock(`bench-held:${batch * 500 + i}`).tryAcquire(),
        ),
      )),
    );
  }
  const acquiredMs = performance.now() - started;
  gc?.();
  const perLock = (process.memoryUsage().heapUsed - before) / handles.length;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const sessions = await admin.query<{ count: string }>(
    'SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = $1',
    [application],
  );
  await admin.end();
  const releaseStarted = performance.now();
  await Promise.all(handles.map((handle) => handle!.release()));
  const releasedMs = performance.now() - releaseStarted;
  await warm.release();
  await provider.close();
  const metric = '10 000 held locks';
  record(metric, 'server connections (pg_stat_activity)', sessions.rows[0]!.count);
  record(
    metric,
    'client heap per held lock',
    gc ? `${(perLock / 1024).toFixed(2)} KiB` : 'run with --expose-gc',
  );
  record(
    metric,
    'acquire all / release all',
    `${acquiredMs.toFixed(0)} ms / ${releasedMs.toFixed(0)} ms`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
