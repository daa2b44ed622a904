/**
 * `pnpm --filter @lockkit/redis bench` — lockkit vs redlock@5 vs redis-semaphore vs a raw
 * `SET NX PX` + Lua release loop, all on one throwaway redis-server, in one process. Prints a
 * table. Figures are loopback numbers on a shared machine: compare rows, not absolutes.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import Redlock from 'redlock';
import { createRedisLockProvider } from '../src/index.js';

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

const contenders: Contender[] = [
  {
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
  },
  {
    label: 'lockkit (@lockkit/redis)',
    waits: true,
    async open(url) {
      const provider = createRedisLockProvider({ nodes: url });
      return {
        async acquire(name) {
          const handle = await provider.createLock(name).acquire();
          return () => handle.release();
        },
        close: () => provider.close(),
      };
    },
  },
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

/**
 * Acquire+release cycles per second on a lock nobody else wants, for every contender: short
 * slices, interleaved, repeated; the median slice of each (the machine's load drifts).
 */
async function uncontended(url: string, slices: number, sliceMs: number): Promise<number[]> {
  const sessions = await Promise.all(contenders.map((contender) => contender.open(url, 'latency')));
  const names = contenders.map(() => `bench:uncontended:${randomUUID()}`);
  const rates: number[][] = contenders.map(() => []);
  for (let slice = -1; slice < slices; slice++) {
    for (const [index, session] of sessions.entries()) {
      const name = names[index] as string;
      let cycles = 0;
      const started = performance.now();
      while (performance.now() - started < sliceMs) {
        await (await session.acquire(name, false))();
        cycles += 1;
      }
      if (slice >= 0) rates[index]?.push((cycles * 1000) / (performance.now() - started));
    }
  }
  await Promise.all(sessions.map((session) => session.close()));
  return rates.map((list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0);
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
  const server = await startRedisServer({ useEnvironment: false });
  const url = server.url;
  const rows: string[][] = [];
  try {
    process.stderr.write('uncontended acquire+release…\n');
    const rates = await uncontended(url, 9, 400);
    const rawOps = rates[0] ?? Number.NaN;
    for (const [index, contender] of contenders.entries()) {
      process.stderr.write(`handoff and workers: ${contender.label}…\n`);
      const ops = rates[index] ?? Number.NaN;
      const latencies = contender.waits ? await handoff(contender, url, 100) : [];
      const separate = contender.waits ? await workers(contender, url, 3000, 8) : Number.NaN;
      const shared = contender.waits ? await workers(contender, url, 3000, 1) : Number.NaN;
      rows.push([
        contender.label,
        `${Math.round(ops)} (${Math.round((100 * ops) / rawOps)} %)`,
        contender.waits ? `${percentile(latencies, 0.5).toFixed(2)} ms` : '—',
        contender.waits ? `${percentile(latencies, 0.99).toFixed(2)} ms` : '—',
        contender.waits ? `${Math.round(separate)}` : '—',
        contender.waits ? `${Math.round(shared)}` : '—',
      ]);
    }
  } finally {
    await server.stop();
  }
  const header = [
    'library',
    'uncontended acquire+release/s (% of raw)',
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
  );
}

await main();
