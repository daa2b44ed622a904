/**
 * `pnpm --filter @lockkit/mysql bench`: @lockkit/mysql next to raw GET_LOCK on the same
 * server, side by side in one run. Starts a throwaway MariaDB (or uses LOCKKIT_MYSQL_URL).
 *
 * Method: every variant keeps its sessions open for the whole run, and the variants take
 * turns in short blocks (A B C …, then … C B A), round after round. A ratio is computed per
 * round (variant / raw of the same round); the table shows the median of those ratios and
 * their quartiles, so a change in machine load during the run hits both sides of a ratio
 * alike and the spread shows how far to trust it. The load average is printed too.
 * "raw" is the baseline: `mysql2/promise`, one connection, a sequential loop.
 * Runs the built package (the script builds it; build core first when core changed).
 * Knobs: BENCH_ROUNDS (15), BENCH_UNCONTENDED_ROUNDS (45), BENCH_OPS (200),
 * BENCH_HANDOFFS (200), BENCH_WORKER_MS (500).
 */
import { loadavg } from 'node:os';
import { type ServerHandle, startMariaDb } from '@lockkit/testkit';
import mysql from 'mysql2';
import mysqlPromise from 'mysql2/promise';
// The built package (what users run), not the TypeScript sources through tsx's transform.
import { createMySqlLockProvider, type MySqlLockProvider } from '../dist/index.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 15);
/** Uncontended blocks are short (~60 ms): more rounds of them. */
const UNCONTENDED_ROUNDS = Number(process.env['BENCH_UNCONTENDED_ROUNDS'] ?? 45);
/** Acquire+release cycles per uncontended block. */
const BLOCK_OPS = Number(process.env['BENCH_OPS'] ?? 200);
const HANDOFFS = Number(process.env['BENCH_HANDOFFS'] ?? 200);
/** Length of one 8-worker block. */
const WORKER_MS = Number(process.env['BENCH_WORKER_MS'] ?? 500);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;
const percentile = (values: readonly number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ??
  Number.NaN;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');

type Fencing = 'table' | 'sequence';

/** One measured thing per variant and round. */
class Samples {
  readonly #values = new Map<string, number[]>();

  add(variant: string, value: number): void {
    this.#values.set(variant, [...(this.#values.get(variant) ?? []), value]);
  }

  median(variant: string): number {
    return median(this.#values.get(variant) ?? []);
  }

  /** `variant / baseline` per round (same round). */
  ratios(variant: string, baseline: string): number[] {
    const base = this.#values.get(baseline) ?? [];
    return (this.#values.get(variant) ?? []).map(
      (value, round) => value / (base[round] ?? Number.NaN),
    );
  }

  /** Median of the per-round ratios, and their quartiles (how much the rounds disagree). */
  ratio(variant: string, baseline: string): string {
    const ratios = this.ratios(variant, baseline);
    const percent = (ratio: number) => Math.round(ratio * 100);
    return (
      `${percent(median(ratios))} % ` +
      `(${percent(percentile(ratios, 0.25))}–${percent(percentile(ratios, 0.75))})`
    );
  }
}

/** Runs `blocks` in turns, `rounds` times, the order reversed every other round. */
async function inTurns(
  blocks: Record<string, () => Promise<void>>,
  rounds: number = ROUNDS,
): Promise<void> {
  const names = Object.keys(blocks);
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) await blocks[name]?.();
  }
}

/** A callback-API connection (the floor: what mysql2 costs without its promise wrapper). */
async function callbackConnection(
  url: string,
): Promise<{ query: (sql: string, values: string[]) => Promise<unknown>; end: () => void }> {
  const raw = mysql.createConnection(url);
  const query = (sql: string, values: string[]) =>
    new Promise((resolve, reject) =>
      raw.query(sql, values, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await query('SELECT 1', []);
  return { query, end: () => raw.end() };
}

/** Uncontended acquire+release of one name per variant: ops/s and client CPU µs per cycle. */
async function uncontended(url: string, throughput: Samples, cpu: Samples): Promise<void> {
  const raw = await mysqlPromise.createConnection(url);
  const callback = await callbackConnection(url);
  const providers: Record<Fencing, MySqlLockProvider> = {
    table: createMySqlLockProvider({ connection: url, fencing: 'table' }),
    sequence: createMySqlLockProvider({ connection: url, fencing: 'sequence' }),
  };
  const cycles: Record<string, () => Promise<unknown>> = {
    raw: async () => {
      await raw.query('SELECT GET_LOCK(?, 0)', ['bench-raw']);
      await raw.query('SELECT RELEASE_LOCK(?)', ['bench-raw']);
    },
    'raw, callback API': async () => {
      await callback.query('SELECT GET_LOCK(?, 0)', ['bench-raw-callback']);
      await callback.query('SELECT RELEASE_LOCK(?)', ['bench-raw-callback']);
    },
    table: async () => (await providers.table.createLock('bench-table').acquire()).release(),
    sequence: async () =>
      (await providers.sequence.createLock('bench-sequence').acquire()).release(),
  };
  const blocks: Record<string, () => Promise<void>> = {};
  for (const [variant, cycle] of Object.entries(cycles)) {
    for (let i = 0; i < 20; i++) await cycle(); // warm: sessions, table, sequence, JIT
    blocks[variant] = async () => {
      const used = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < BLOCK_OPS; i++) await cycle();
      throughput.add(variant, BLOCK_OPS / ((performance.now() - started) / 1000));
      const { user, system } = process.cpuUsage(used);
      cpu.add(variant, (user + system) / BLOCK_OPS);
    };
  }
  await inTurns(blocks, UNCONTENDED_ROUNDS);
  await raw.end();
  callback.end();
  await Promise.all([providers.table.close(), providers.sequence.close()]);
}

async function rawHandoff(url: string): Promise<number[]> {
  const [holder, waiter] = [
    await mysqlPromise.createConnection(url),
    await mysqlPromise.createConnection(url),
  ];
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

/** One worker cycle: acquire, hold 1 ms, release (the worker then thinks 1 ms). */
type WorkerCycle = (worker: number) => Promise<void>;

/** 8 workers on one lock per variant, in turns of WORKER_MS; cycles per second. */
async function workers(url: string, throughput: Samples): Promise<void> {
  const connections = await Promise.all(
    Array.from({ length: 8 }, () => mysqlPromise.createConnection(url)),
  );
  const opened: MySqlLockProvider[] = [];
  const lockkit = (providers: number, fencing: Fencing, name: string): WorkerCycle => {
    const own = Array.from({ length: providers }, () =>
      createMySqlLockProvider({ connection: url, fencing }),
    );
    opened.push(...own);
    const locks = Array.from({ length: 8 }, (_, worker) =>
      own[worker % providers]?.createLock(name),
    );
    return async (worker) => {
      const handle = await locks[worker]?.acquire();
      await sleep(1);
      await handle?.release();
    };
  };
  const cycles: Record<string, WorkerCycle> = {
    raw: async (worker) => {
      const connection = connections[worker];
      await connection?.query('SELECT GET_LOCK(?, 60)', ['bench-raw-workers']);
      await sleep(1);
      await connection?.query('SELECT RELEASE_LOCK(?)', ['bench-raw-workers']);
    },
    table: lockkit(8, 'table', 'bench-workers-table'),
    sequence: lockkit(8, 'sequence', 'bench-workers-sequence'),
    'table, 1 provider': lockkit(1, 'table', 'bench-workers-shared'),
  };
  const run = async (cycle: WorkerCycle): Promise<number> => {
    let count = 0;
    const started = performance.now();
    const endAt = started + WORKER_MS;
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        while (performance.now() < endAt) {
          await cycle(worker);
          count += 1;
          await sleep(1);
        }
      }),
    );
    return count / ((performance.now() - started) / 1000);
  };
  const blocks: Record<string, () => Promise<void>> = {};
  for (const [variant, cycle] of Object.entries(cycles)) {
    await run(cycle); // warm: sessions, counters
    blocks[variant] = async () => throughput.add(variant, await run(cycle));
  }
  await inTurns(blocks);
  await Promise.all(connections.map((connection) => connection.end()));
  await Promise.all(opened.map((provider) => provider.close()));
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
    const loadBefore = load();
    const ops = new Samples();
    const cpu = new Samples();
    await uncontended(url, ops, cpu);
    const handoffs = { raw: await rawHandoff(url), lockkit: await lockkitHandoff(url) };
    const cycles = new Samples();
    await workers(url, cycles);
    const held = await heldLocks(url);
    const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
    const lines = [
      row(['measure', 'raw GET_LOCK', '@lockkit/mysql', 'lockkit / raw (quartiles of the rounds)']),
      row(['---', '---:', '---:', '---:']),
      ...(['table', 'sequence'] as const).map((fencing) =>
        row([
          `uncontended acquire+release, ops/s (fencing: ${fencing})`,
          ops.median('raw').toFixed(0),
          ops.median(fencing).toFixed(0),
          ops.ratio(fencing, 'raw'),
        ]),
      ),
      row([
        'uncontended, raw on the mysql2 callback API instead of mysql2/promise, ops/s',
        ops.median('raw, callback API').toFixed(0),
        '',
        `(raw callback / raw: ${ops.ratio('raw, callback API', 'raw')})`,
      ]),
      ...(['table', 'sequence'] as const).map((fencing) =>
        row([
          `uncontended, client CPU per acquire+release, µs (fencing: ${fencing})`,
          cpu.median('raw').toFixed(0),
          cpu.median(fencing).toFixed(0),
          '',
        ]),
      ),
      row([
        'two-client handoff p50, ms',
        percentile(handoffs.raw, 0.5).toFixed(2),
        percentile(handoffs.lockkit, 0.5).toFixed(2),
        '',
      ]),
      row([
        'two-client handoff p99, ms',
        percentile(handoffs.raw, 0.99).toFixed(2),
        percentile(handoffs.lockkit, 0.99).toFixed(2),
        '',
      ]),
      ...(['table', 'sequence'] as const).map((fencing) =>
        row([
          `8 workers (1 ms hold, 1 ms think), cycles/s, 8 providers (fencing: ${fencing})`,
          cycles.median('raw').toFixed(0),
          cycles.median(fencing).toFixed(0),
          cycles.ratio(fencing, 'raw'),
        ]),
      ),
      row([
        '8 workers, cycles/s, 1 shared provider (fencing: table)',
        cycles.median('raw').toFixed(0),
        cycles.median('table, 1 provider').toFixed(0),
        cycles.ratio('table, 1 provider', 'raw'),
      ]),
      row([
        '10 000 held locks: time to take them; sessions',
        '',
        `${held.ms.toFixed(0)} ms; ${held.sessions} sessions`,
        '',
      ]),
    ];
    console.log(
      `\n@lockkit/mysql bench: interleaved rounds: ${UNCONTENDED_ROUNDS} × ${BLOCK_OPS} ` +
        `uncontended cycles, ${ROUNDS} × ${WORKER_MS} ms of 8 workers, per variant; ` +
        `${url.replace(/\/\/[^@]*@/, '//')}\nload average before: ${loadBefore}; after: ${load()}\n`,
    );
    console.log(lines.join('\n'));
  } finally {
    await server?.stop();
  }
}

await main();
