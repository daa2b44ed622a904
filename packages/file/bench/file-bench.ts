/**
 * `pnpm --filter @lockkit/file bench` — lockkit's file backend side by side with raw
 * proper-lockfile in one run, on a directory under os.tmpdir():
 *
 * 1. uncontended acquire + release, ops/s (rounds interleaved, median of rounds);
 * 2. two-client handoff: one client releases while the other waits; ms from the release
 *    call to the waiter holding the lock (p50 / p99). proper-lockfile cannot wait, so its
 *    waiter retries every 10 ms (`retries: { minTimeout: 10, maxTimeout: 10 }`).
 *
 * Environment: BENCH_ROUNDS (default 12), BENCH_OPS (per round, default 300),
 * BENCH_HANDOFFS (default 200), BENCH_DIR (default os.tmpdir()).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { createFileLockProvider } from '../src/index.js';

const rounds = Number(process.env['BENCH_ROUNDS'] ?? 12);
const opsPerRound = Number(process.env['BENCH_OPS'] ?? 300);
const handoffs = Number(process.env['BENCH_HANDOFFS'] ?? 200);
const directory = mkdtempSync(join(process.env['BENCH_DIR'] ?? tmpdir(), 'lockkit-bench-'));
const target = join(directory, 'resource');
writeFileSync(target, '');

type Cycle = () => Promise<unknown>;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
};
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Throughput {
  readonly opsPerSecond: number;
  /** CPU time (user + system, all threads) per operation: independent of other load. */
  readonly cpuMicros: number;
}

async function uncontended(): Promise<Map<string, Throughput>> {
  const sync = createFileLockProvider({ directory }).createLock('uncontended-sync');
  const async = createFileLockProvider({ directory, io: 'async' }).createLock('uncontended-async');
  const cycles: [string, Cycle][] = [
    ['lockkit file (io: sync, default)', async () => (await sync.acquire()).release()],
    ['lockkit file (io: async)', async () => (await async.acquire()).release()],
    ['proper-lockfile lock/unlock (defaults)', async () => (await lockfile.lock(target))()],
    [
      'proper-lockfile lock/unlock (realpath: false)',
      async () => (await lockfile.lock(target, { realpath: false }))(),
    ],
  ];
  const samples = new Map<string, number[]>(cycles.map(([name]) => [name, []]));
  const cpu = new Map<string, number>(cycles.map(([name]) => [name, 0]));
  for (let round = 0; round < rounds + 2; round++) {
    for (const [name, cycle] of cycles) {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < opsPerRound; i++) await cycle();
      const opsPerSecond = (opsPerRound * 1000) / (performance.now() - started);
      const used = process.cpuUsage(cpuBefore);
      if (round < 2) continue; // two warm-up rounds
      samples.get(name)!.push(opsPerSecond);
      cpu.set(name, cpu.get(name)! + used.user + used.system);
    }
  }
  return new Map(
    [...samples].map(([name, values]) => [
      name,
      { opsPerSecond: median(values), cpuMicros: cpu.get(name)! / (rounds * opsPerRound) },
    ]),
  );
}

interface Client {
  acquire(): Promise<() => Promise<unknown>>;
}

/** ms from a release call to the other client holding the lock, `handoffs` times. */
async function handoff(a: Client, b: Client): Promise<number[]> {
  const times: number[] = [];
  let release = await a.acquire();
  let waiter = b;
  let other = a;
  for (let i = 0; i < handoffs + 10; i++) {
    const granted = waiter.acquire().then((next) => ({ next, at: performance.now() }));
    // Release once the waiter is surely waiting (its first attempt has failed: watching, or
    // between retries), at a random moment so a retrying waiter is caught at every phase of
    // its 10 ms cycle.
    await pause(20 + Math.random() * 10);
    const releasedAt = performance.now();
    await release();
    const { next, at } = await granted;
    if (i >= 10) times.push(at - releasedAt);
    release = next;
    [waiter, other] = [other, waiter];
  }
  await release();
  return times;
}

async function measureHandoffs(): Promise<Map<string, number[]>> {
  const results = new Map<string, number[]>();
  const [p1, p2] = [createFileLockProvider({ directory }), createFileLockProvider({ directory })];
  const lockkitClient = (lock: ReturnType<typeof p1.createLock>): Client => ({
    acquire: async () => {
      const handle = await lock.acquire();
      return () => handle.release();
    },
  });
  results.set(
    'lockkit file (fs.watch wake-up)',
    await handoff(lockkitClient(p1.createLock('handoff')), lockkitClient(p2.createLock('handoff'))),
  );
  const retrying: Client = {
    acquire: () =>
      lockfile.lock(target, {
        retries: { retries: 100_000, minTimeout: 10, maxTimeout: 10, factor: 1 },
      }),
  };
  results.set('proper-lockfile, 10 ms retries', await handoff(retrying, retrying));
  await Promise.all([p1.close(), p2.close()]);
  return results;
}

const throughput = await uncontended();
const handoffTimes = await measureHandoffs();
rmSync(directory, { recursive: true, force: true });

const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(' ');
console.log(
  `\n@lockkit/file bench — node ${process.version}, ${process.platform}, load ${load}, ` +
    `${rounds} rounds × ${opsPerRound} ops, ${handoffs} handoffs\n`,
);
console.log('| uncontended acquire + release | ops/s (median) | µs/op | CPU µs/op |');
console.log('| --- | ---: | ---: | ---: |');
for (const [name, { opsPerSecond, cpuMicros }] of throughput) {
  console.log(
    `| ${name} | ${Math.round(opsPerSecond)} | ${(1e6 / opsPerSecond).toFixed(0)} | ${cpuMicros.toFixed(0)} |`,
  );
}
console.log('\n| two-client handoff | p50 ms | p99 ms |');
console.log('| --- | ---: | ---: |');
for (const [name, times] of handoffTimes) {
  console.log(
    `| ${name} | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 99).toFixed(2)} |`,
  );
}
