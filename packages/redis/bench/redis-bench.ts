/**
 * `pnpm --filter @lockkit/redis bench` — lockkit vs redlock@5 vs redis-semaphore vs a raw
 * `SET NX PX` + Lua release loop, all on one throwaway redis-server, in one process. Prints a
 * table. Figures are loopback numbers on a shared machine: compare rows, not absolutes; the
 * uncontended ratio to the raw loop is measured in interleaved rounds so load drift cancels.
 * Runs the built package (`pnpm --filter @lockkit/redis... build` first when core changed).
 * Knobs: BENCH_ROUNDS (200), BENCH_SLICE_MS (30), BENCH_UNCONTENDED_ONLY=1 (skip handoff and
 * worker columns).
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IDistributedLock, LockHandle } from '@lockkit/core';
import { startRedisServer } from '@lockkit/testkit';
import { Command, Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import Redlock from 'redlock';
// The built package (what users run), not the TypeScript sources through tsx's transform.
import { createRedisLockProvider } from '../dist/index.js';
import { redisLockKeys } from '../dist/redis-keys.js';
import { acquireMutex } from '../dist/scripts/acquire-scripts.js';
import { releaseString } from '../dist/scripts/release-scripts.js';

type Release = () => Promise<unknown>;

/** One client of a library: takes the lock (waiting if `wait`) and returns its release. */
interface Session {
  acquire(name: string, wait: boolean): Promise<Release>;
  close(): Promise<void>;
}

interface Contender {
  readonly label: string;
  /** Whether it can wait for a held lock (the raw loop cannot). */
  readonly waits: boolean;
  open(url: string, purpose: 'latency' | 'workers'): Promise<Session>;
}

const releaseLua = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** lockkit, taking the lock the way `take` says (the same provider options for every row). */
function lockkitContender(
  label: string,
  take: (lock: IDistributedLock, wait: boolean) => Promise<LockHandle | null>,
): Contender {
  return {
    label,
    waits: true,
    async open(url) {
      const provider = createRedisLockProvider({ nodes: url });
      return {
        async acquire(name, wait) {
          const handle = await take(provider.createLock(name), wait);
          if (!handle) throw new Error('busy');
          return () => handle.release();
        },
        close: () => provider.close(),
      };
    },
  };
}

const raw: Contender = {
  label: 'raw SET NX PX + Lua release',
  waits: false,
  async open(url) {
    const client = new Redis(url);
    const sha = (await client.script('LOAD', releaseLua)) as string;
    return {
      async acquire(name) {
        const token = randomUUID();
        if ((await client.set(name, token, 'PX', 30_000, 'NX')) !== 'OK') throw new Error('busy');
        return () => client.evalsha(sha, 1, name, token);
      },
      close: async () => void client.disconnect(),
    };
  },
};

/**
 * The ceiling of any ioredis client of lockkit's scripts: the very two calls the backend sends
 * for an uncontended mutex (the acquire script with its cancel-marker check and fencing INCR,
 * the token-checked release that wakes a waiter), built and sent as the backend builds them
 * (an ioredis Command with its arguments set, no flattening), with no lockkit code at all.
 */
const scriptsAlone: Contender = {
  label: "lockkit's two scripts alone (no lockkit code)",
  waits: false,
  async open(url) {
    const client = new Redis(url);
    for (const script of [acquireMutex, releaseString]) await client.script('LOAD', script.lua);
    // Keys are derived once per name, as the backend caches them (hashing a name costs more
    // than the rest of the client's work for a cycle).
    const keysByName = new Map<string, ReturnType<typeof redisLockKeys>>();
    const send = (args: string[]): Promise<unknown> => {
      const command = new Command('evalsha', [], { replyEncoding: 'utf8' });
      command.args = args;
      client.sendCommand(command);
      return command.promise;
    };
    return {
      async acquire(name) {
        let keys = keysByName.get(name);
        if (!keys) {
          keys = redisLockKeys('', 'mutex', name);
          keysByName.set(name, keys);
        }
        const token = randomUUID();
        const reply = await send([
          acquireMutex.sha,
          '3',
          keys.lock,
          keys.fence,
          keys.cancel(token),
          token,
          '30000',
        ]);
        // A grant is the fencing token (an integer >= 1, or a string from 10^14 on).
        if (!(typeof reply === 'string' || (typeof reply === 'number' && reply >= 1))) {
          throw new Error('busy');
        }
        return () =>
          send([
            releaseString.sha,
            '2',
            keys.lock,
            keys.waiters,
            token,
            keys.channel,
            '1',
            'PUBLISH',
          ]);
      },
      close: async () => void client.disconnect(),
    };
  },
};

/** The lockkit row of the handoff and worker columns: `acquire()`, waiting as long as it takes. */
const lockkit = lockkitContender('lockkit acquire({ timeout: 5000 })', (lock) =>
  lock.acquire({ timeout: 5000 }),
);

const contenders: Contender[] = [
  raw,
  lockkit,
  // Uncontended only (it does not wait): one attempt, no timeout machinery.
  { ...lockkitContender('lockkit tryAcquire()', (lock) => lock.tryAcquire()), waits: false },
  scriptsAlone,
  {
    label: 'redlock@5.0.0-beta.2',
    waits: true,
    async open(url, purpose) {
      const client = new Redis(url);
      // Defaults (retry every 200 ± 100 ms, 10 retries); the workers retry without limit.
      const redlock = new Redlock([client], purpose === 'workers' ? { retryCount: -1 } : {});
      return {
        async acquire(name) {
          const lock = await redlock.acquire([name], 30_000);
          return () => lock.release();
        },
        close: async () => void client.disconnect(),
      };
    },
  },
  {
    label: 'redis-semaphore@5.8.0 Mutex',
    waits: true,
    async open(url) {
      const client = new Redis(url);
      return {
        async acquire(name) {
          // Defaults: poll every 10 ms. One Mutex object per hold (it carries the identifier).
          const mutex = new Mutex(client, name, { lockTimeout: 30_000, acquireTimeout: 60_000 });
          await mutex.acquire();
          return () => mutex.release();
        },
        close: async () => void client.disconnect(),
      };
    },
  },
];

/** Rate and ratio to the raw loop of one contender over the rounds. */
interface Uncontended {
  /** Median acquire+release cycles per second. */
  readonly rate: number;
  /** Median over the rounds of (this contender's rate / the raw loop's rate in that round). */
  readonly ratio: number;
  /** Lowest and highest per-round ratio. */
  readonly spread: readonly [number, number];
}

/**
 * Acquire+release cycles per second on a lock nobody else wants. Each round runs every
 * contender for one short slice, one after the other (A B C …, the order rotated each round),
 * and relates each to the raw loop's slice of the same round: load that drifts over the run
 * moves both, so the median of the per-round ratios holds still where absolute rates do not.
 * Slices are short and rounds many: on a shared 2-vCPU machine the rate drifts within tenths
 * of a second, so with 300 ms slices per-round ratios ranged from 60 % to 160 % and the
 * median of 60 rounds moved by ±3 points from run to run; 30 ms slices put a round's
 * contenders on the same machine state, and 200 rounds repeat within about a point.
 */
async function uncontended(url: string, rounds: number, sliceMs: number): Promise<Uncontended[]> {
  const sessions = await Promise.all(contenders.map((contender) => contender.open(url, 'latency')));
  const names = contenders.map(() => `bench:uncontended:${randomUUID()}`);
  const rates: number[][] = contenders.map(() => []);
  // The first rounds warm up (the JIT optimizes each library's path): 300 ms each.
  const warmupRounds = Math.ceil(300 / sliceMs);
  for (let round = -warmupRounds; round < rounds; round++) {
    const perRound: number[] = [];
    for (let step = 0; step < sessions.length; step++) {
      const index = (step + Math.max(0, round)) % sessions.length;
      const session = sessions[index] as Session;
      const name = names[index] as string;
      let cycles = 0;
      const started = performance.now();
      while (performance.now() - started < sliceMs) {
        await (await session.acquire(name, false))();
        cycles += 1;
      }
      perRound[index] = (cycles * 1000) / (performance.now() - started);
    }
    if (round < 0) continue;
    for (const [index, rate] of perRound.entries()) rates[index]?.push(rate);
  }
  await Promise.all(sessions.map((session) => session.close()));
  const rawRates = rates[0] as number[];
  return rates.map((list) => {
    const ratios = list.map((rate, round) => rate / (rawRates[round] as number));
    const sorted = [...ratios].sort((a, b) => a - b);
    return {
      rate: median(list),
      ratio: median(ratios),
      spread: [sorted[0] ?? Number.NaN, sorted.at(-1) ?? Number.NaN],
    };
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Release-to-grant latency when one client waits for another's lock. */
async function handoff(contender: Contender, url: string, rounds: number): Promise<number[]> {
  const [holder, waiter] = [
    await contender.open(url, 'latency'),
    await contender.open(url, 'latency'),
  ];
  const name = `bench:handoff:${randomUUID()}`;
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const release = await holder.acquire(name, true);
    const waiting = waiter.acquire(name, true).then((next) => ({ next, at: performance.now() }));
    await sleep(20 + Math.random() * 30); // the waiter settles into its wait
    const releasedAt = performance.now();
    await release();
    const { next, at } = await waiting;
    samples.push(at - releasedAt);
    await next();
  }
  await Promise.all([holder.close(), waiter.close()]);
  return samples.sort((a, b) => a - b);
}

/**
 * Critical sections per second: 8 workers on one lock, each holding 1 ms and thinking 1 ms;
 * with one client each (8 processes' worth of clients) or all sharing one client.
 */
async function workers(
  contender: Contender,
  url: string,
  durationMs: number,
  clients: 1 | 8,
): Promise<number> {
  const opened = await Promise.all(
    Array.from({ length: clients }, () => contender.open(url, 'workers')),
  );
  const sessions = Array.from({ length: 8 }, (_, index) => opened[index % clients] as Session);
  const name = `bench:workers:${randomUUID()}`;
  let sections = 0;
  let inside = 0;
  const stopAt = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      while (performance.now() < stopAt) {
        const release = await session.acquire(name, true);
        inside += 1;
        if (inside > 1) throw new Error(`${contender.label}: two holders at once`);
        await sleep(1);
        inside -= 1;
        await release();
        sections += 1;
        await sleep(1);
      }
    }),
  );
  const elapsed = performance.now() - started;
  await Promise.all(opened.map((session) => session.close()));
  return (sections * 1000) / elapsed;
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const rounds = Number(process.env['BENCH_ROUNDS'] ?? 200);
  const sliceMs = Number(process.env['BENCH_SLICE_MS'] ?? 30);
  const loadBefore = loadAverage();
  const server = await startRedisServer({ useEnvironment: false });
  const url = server.url;
  const rows: string[][] = [];
  try {
    process.stderr.write(`uncontended acquire+release: ${rounds} rounds × ${sliceMs} ms…\n`);
    const results = await uncontended(url, rounds, sliceMs);
    for (const [index, contender] of contenders.entries()) {
      const { rate, ratio, spread } = results[index] as Uncontended;
      const skipRest = process.env['BENCH_UNCONTENDED_ONLY'] === '1' || !contender.waits;
      if (!skipRest) process.stderr.write(`handoff and workers: ${contender.label}…\n`);
      const latencies = skipRest ? [] : await handoff(contender, url, 100);
      const separate = skipRest ? Number.NaN : await workers(contender, url, 3000, 8);
      const shared = skipRest ? Number.NaN : await workers(contender, url, 3000, 1);
      rows.push([
        contender.label,
        `${Math.round(rate)}`,
        `${Math.round(100 * ratio)} % (${Math.round(100 * spread[0])}–${Math.round(100 * spread[1])})`,
        skipRest ? '—' : `${percentile(latencies, 0.5).toFixed(2)} ms`,
        skipRest ? '—' : `${percentile(latencies, 0.99).toFixed(2)} ms`,
        skipRest ? '—' : `${Math.round(separate)}`,
        skipRest ? '—' : `${Math.round(shared)}`,
      ]);
    }
  } finally {
    await server.stop();
  }
  const header = [
    'library',
    'uncontended acquire+release/s',
    'ratio to raw (min–max)',
    'handoff p50',
    'handoff p99',
    '8 workers × own client: CS/s',
    '8 workers, 1 client: CS/s',
  ];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  console.log(
    `\nNode ${process.version}, one redis-server on loopback, client and server share the CPUs.`,
    `Uncontended: median of ${rounds} interleaved rounds of ${sliceMs} ms slices; the ratio is`,
    'the median of per-round ratios to the raw loop.',
    `Load average (1 min) before: ${loadBefore}, after: ${loadAverage()}.`,
  );
}

function loadAverage(): string {
  return loadavg()[0]?.toFixed(2) ?? '?';
}

await main();
