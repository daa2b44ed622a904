/**
 * `pnpm --filter @lockkit/mysql bench`: @lockkit/mysql next to raw GET_LOCK on the same
 * server, side by side in one run. Starts a throwaway MariaDB (or uses LOCKKIT_MYSQL_URL).
 * Uncontended figures interleave raw and lockkit in blocks of 100 cycles, summed over
 * ROUNDS rounds; the others are medians over ROUNDS alternating rounds.
 */
import { type ServerHandle, startMariaDb } from '@lockkit/testkit';
import mysql, { type Connection } from 'mysql2/promise';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const UNCONTENDED_OPS = Number(process.env['BENCH_OPS'] ?? 2000);
const HANDOFFS = Number(process.env['BENCH_HANDOFFS'] ?? 200);
const WORKER_SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

type Fencing = 'table' | 'sequence';
type Variant = 'raw' | Fencing;

/** Wall time and client CPU of `ops` acquire+release cycles. */
interface Cost {
  ms: number;
  cpuMicros: number;
  ops: number;
}

const variants: readonly Variant[] = ['raw', 'table', 'sequence'];

/**
 * Uncontended acquire+release of one name, raw and lockkit interleaved in blocks of 100
 * cycles (so a change in machine load hits every variant alike), added into `costs`.
 */
async function uncontended(url: string, costs: Record<Variant, Cost>): Promise<void> {
  const raw = await mysql.createConnection(url);
  const table = createMySqlLockProvider({ connection: url, fencing: 'table' });
  const sequence = createMySqlLockProvider({ connection: url, fencing: 'sequence' });
  const cycles: Record<Variant, () => Promise<unknown>> = {
    raw: async () => {
      await raw.query('SELECT GET_LOCK(?, 0)', ['bench-raw']);
      await raw.query('SELECT RELEASE_LOCK(?)', ['bench-raw']);
    },
    table: async () => (await table.createLock('bench-table').acquire()).release(),
    sequence: async () => (await sequence.createLock('bench-sequence').acquire()).release(),
  };
  for (const variant of variants) await cycles[variant](); // warm: sessions, table, sequence
  for (let block = 0; block < UNCONTENDED_OPS / 100; block++) {
    for (const variant of variants) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < 100; i++) await cycles[variant]();
      costs[variant].ms += performance.now() - started;
      const used = process.cpuUsage(cpu);
      costs[variant].cpuMicros += used.user + used.system;
      costs[variant].ops += 100;
    }
  }
  await raw.end();
  await Promise.all([table.close(), sequence.close()]);
}

async function rawHandoff(url: string): Promise<number[]> {
  const [holder, waiter] = [await mysql.createConnection(url), await mysql.createConnection(url)];
  const samples: number[] = [];
  for (let i = 0; i < HANDOFFS; i++) {
    await holder.query('SELECT GET_LOCK(?, 0)', ['bench-raw-handoff']);
    const granted = waiter
      .query('SELECT GET_LOCK(?, 10)', ['bench-raw-handoff'])
      .then(() => performance.now());
    await sleep(5);
    const releasedAt = performance.now();
    await holder.query('SELECT RELEASE_LOCK(?)', ['bench-raw-handoff']);
    samples.push((await granted) - releasedAt);
    await waiter.query('SELECT RELEASE_LOCK(?)', ['bench-raw-handoff']);
  }
  await Promise.all([holder.end(), waiter.end()]);
  return samples;
}

async function lockkitHandoff(url: string): Promise<number[]> {
  const [a, b] = [
    createMySqlLockProvider({ connection: url }),
    createMySqlLockProvider({ connection: url }),
  ];
  const samples: number[] = [];
  for (let i = 0; i < HANDOFFS; i++) {
    const held = await a.createLock('bench-lockkit-handoff').acquire();
    const granted = b
      .createLock('bench-lockkit-handoff')
      .acquire()
      .then((handle) => ({ handle, at: performance.now() }));
    await sleep(5);
    const releasedAt = performance.now();
    await held.release();
    const { handle, at } = await granted;
    samples.push(at - releasedAt);
    await handle.release();
  }
  await Promise.all([a.close(), b.close()]);
  return samples;
}

/** 8 workers: acquire, hold 1 ms, release, think 1 ms; cycles per second. */
async function workers(
  run: (stop: () => boolean, count: () => void) => Promise<void>[],
): Promise<number> {
  let cycles = 0;
  const endAt = performance.now() + WORKER_SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    run(
      () => performance.now() >= endAt,
      () => void cycles++,
    ),
  );
  return cycles / ((performance.now() - started) / 1000);
}

async function rawWorkers(url: string): Promise<number> {
  const connections: Connection[] = await Promise.all(
    Array.from({ length: 8 }, () => mysql.createConnection(url)),
  );
  const result = await workers((stop, count) =>
    connections.map(async (connection) => {
      while (!stop()) {
        await connection.query('SELECT GET_LOCK(?, 60)', ['bench-raw-workers']);
        await sleep(1);
        await connection.query('SELECT RELEASE_LOCK(?)', ['bench-raw-workers']);
        count();
        await sleep(1);
      }
    }),
  );
  await Promise.all(connections.map((connection) => connection.end()));
  return result;
}

async function lockkitWorkers(url: string, providers: number, fencing: Fencing): Promise<number> {
  const locks: MySqlLockProvider[] = Array.from({ length: providers }, () =>
    createMySqlLockProvider({ connection: url, fencing }),
  );
  const result = await workers((stop, count) =>
    Array.from({ length: 8 }, async (_, worker) => {
      const lock = locks[worker % providers]!.createLock('bench-lockkit-workers');
      while (!stop()) {
        const handle = await lock.acquire();
        await sleep(1);
        await handle.release();
        count();
        await sleep(1);
      }
    }),
  );
  await Promise.all(locks.map((provider) => provider.close()));
  return result;
}

async function heldLocks(url: string): Promise<{ ms: number; sessions: number }> {
  const locks = createMySqlLockProvider({ connection: url });
  const started = performance.now();
  const handles = [];
  for (let batch = 0; batch < 100; batch++) {
    handles.push(
      ...(await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          locks.createLock(`bench-held:${batch}:${i}`).acquire(),
        ),
      )),
    );
  }
  const elapsed = performance.now() - started;
  const sessions = new Set(handles.map((handle) => locks.connectionIdOf(handle))).size;
  await Promise.all(handles.map((handle) => handle.release()));
  await locks.close();
  return { ms: elapsed, sessions };
}

async function main(): Promise<void> {
  const server: ServerHandle | undefined = process.env['LOCKKIT_MYSQL_URL']
    ? undefined
    : await startMariaDb();
  const url = server?.url ?? (process.env['LOCKKIT_MYSQL_URL'] as string);
  try {
    const samples: Record<string, number[]> = {};
    const add = (key: string, ...values: number[]) => {
      samples[key] = [...(samples[key] ?? []), ...values];
    };
    const costs: Record<Variant, Cost> = {
      raw: { ms: 0, cpuMicros: 0, ops: 0 },
      table: { ms: 0, cpuMicros: 0, ops: 0 },
      sequence: { ms: 0, cpuMicros: 0, ops: 0 },
    };
    for (let round = 0; round < ROUNDS; round++) {
      await uncontended(url, costs);
      add('raw handoff', ...(await rawHandoff(url)));
      add('lockkit handoff', ...(await lockkitHandoff(url)));
      add('raw workers', await rawWorkers(url));
      add('table workers', await lockkitWorkers(url, 8, 'table'));
      add('sequence workers', await lockkitWorkers(url, 8, 'sequence'));
      add('table workers, 1 provider', await lockkitWorkers(url, 1, 'table'));
    }
    const held = await heldLocks(url);
    const perSecond = (variant: Variant) => costs[variant].ops / (costs[variant].ms / 1000);
    const cpu = (variant: Variant) => (costs[variant].cpuMicros / costs[variant].ops).toFixed(0);
    const of = (key: string) => median(samples[key] ?? [0]);
    const ratio = (ours: string, raw: string) => `${Math.round((of(ours) / of(raw)) * 100)} %`;
    const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
    const handoff = (key: string, p: number) => percentile(samples[key] ?? [0], p).toFixed(2);
    const lines = [
      row(['measure', 'raw GET_LOCK', '@lockkit/mysql', 'lockkit / raw']),
      row(['---', '---:', '---:', '---:']),
      ...(['table', 'sequence'] as const).map((fencing) =>
        row([
          `uncontended acquire+release, ops/s (fencing: ${fencing})`,
          perSecond('raw').toFixed(0),
          perSecond(fencing).toFixed(0),
          `${Math.round((perSecond(fencing) / perSecond('raw')) * 100)} %`,
        ]),
      ),
      ...(['table', 'sequence'] as const).map((fencing) =>
        row([
          `uncontended, client CPU per acquire+release, µs (fencing: ${fencing})`,
          cpu('raw'),
          cpu(fencing),
          '',
        ]),
      ),
      row([
        'two-client handoff p50, ms',
        handoff('raw handoff', 0.5),
        handoff('lockkit handoff', 0.5),
        '',
      ]),
      row([
        'two-client handoff p99, ms',
        handoff('raw handoff', 0.99),
        handoff('lockkit handoff', 0.99),
        '',
      ]),
      ...(['table', 'sequence'] as const).map((fencing) =>
        row([
          `8 workers (1 ms hold, 1 ms think), cycles/s, 8 providers (fencing: ${fencing})`,
          of('raw workers').toFixed(0),
          of(`${fencing} workers`).toFixed(0),
          ratio(`${fencing} workers`, 'raw workers'),
        ]),
      ),
      row([
        '8 workers, cycles/s, 1 shared provider (fencing: table)',
        of('raw workers').toFixed(0),
        of('table workers, 1 provider').toFixed(0),
        ratio('table workers, 1 provider', 'raw workers'),
      ]),
      row([
        '10 000 held locks: time to take them; sessions',
        '',
        `${held.ms.toFixed(0)} ms; ${held.sessions} sessions`,
        '',
      ]),
    ];
    console.log(`\n@lockkit/mysql bench: ${ROUNDS} rounds; ${url.replace(/\/\/[^@]*@/, '//')}\n`);
    console.log(lines.join('\n'));
  } finally {
    await server?.stop();
  }
}

await main();
