/**
 * Where an uncontended acquire+release spends the client's CPU (run `pnpm build` first; it
 * measures the built package). One throwaway redis-server; modes: raw (SET NX PX + Lua
 * release), backend (RedisLockBackend alone, no core), try (`tryAcquire()`), timeout
 * (`acquire({ timeout: 5000 })`), acquire (`acquire()`).
 *
 * - `node --import tsx --cpu-prof bench/redis-profile.ts <mode> [seconds]` — one mode, for a
 *   CPU profile.
 * - `node --import tsx bench/redis-profile.ts compare [rounds]` — every mode in interleaved
 *   300 ms slices in this one process; prints the median client CPU µs and wall µs per cycle.
 */
import { randomUUID } from 'node:crypto';
import { startRedisServer } from '@lockkit/testkit';
import { Redis } from 'ioredis';
// The built package (what users run), not the TypeScript sources through tsx's transform.
import { createRedisLockProvider, RedisLockBackend, resolveRedisOptions } from '../dist/index.js';

type Mode = 'raw' | 'backend' | 'try' | 'timeout' | 'acquire';
const modes: readonly Mode[] = ['raw', 'backend', 'try', 'timeout', 'acquire'];
const releaseLua = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

interface Loop {
  cycle(): Promise<void>;
  close(): Promise<void>;
}

async function open(mode: Mode, url: string): Promise<Loop> {
  const name = `profile:${randomUUID()}`;
  if (mode === 'raw') {
    const client = new Redis(url);
    const sha = (await client.script('LOAD', releaseLua)) as string;
    return {
      async cycle() {
        const token = randomUUID();
        if ((await client.set(name, token, 'PX', 30_000, 'NX')) !== 'OK') throw new Error('busy');
        await client.evalsha(sha, 1, name, token);
      },
      close: async () => void client.disconnect(),
    };
  }
  if (mode === 'backend') {
    const backend = new RedisLockBackend(resolveRedisOptions({ nodes: url }));
    const request = { name, namespace: '', kind: 'mutex', maxCount: 1 } as const;
    const wait = {
      signal: new AbortController().signal,
      deadline: Number.NEGATIVE_INFINITY,
      waiting: () => {},
    };
    return {
      async cycle() {
        const grant = await backend.tryAcquire(request, wait);
        if (!grant) throw new Error('busy');
        await backend.release(request, grant);
      },
      close: () => backend.close(),
    };
  }
  const provider = createRedisLockProvider({ nodes: url });
  const lock = provider.createLock(name);
  return {
    async cycle() {
      const handle =
        mode === 'try'
          ? await lock.tryAcquire()
          : mode === 'timeout'
            ? await lock.acquire({ timeout: 5000 })
            : await lock.acquire();
      if (!handle) throw new Error('busy');
      await handle.release();
    },
    close: () => provider.close(),
  };
}

/** Runs `loop` for `ms`; returns [client CPU µs, wall µs] per cycle. */
async function slice(loop: Loop, ms: number): Promise<[number, number]> {
  let cycles = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  while (performance.now() - started < ms) {
    await loop.cycle();
    cycles += 1;
  }
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return [(cpu.user + cpu.system) / cycles, (1000 * wall) / cycles];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const what = process.argv[2] ?? 'try';
const server = await startRedisServer({ useEnvironment: false });
try {
  if (what === 'compare') {
    const rounds = Number(process.argv[3] ?? 15);
    const loops = await Promise.all(modes.map((mode) => open(mode, server.url)));
    const samples = modes.map((): [number, number][] => []);
    for (let round = -1; round < rounds; round++) {
      for (let step = 0; step < loops.length; step++) {
        const index = (step + Math.max(0, round)) % loops.length;
        const sample = await slice(loops[index] as Loop, 300);
        if (round >= 0) samples[index]?.push(sample);
      }
    }
    for (const [index, mode] of modes.entries()) {
      const cpu = median((samples[index] ?? []).map(([us]) => us));
      const wall = median((samples[index] ?? []).map(([, us]) => us));
      console.log(
        `${mode.padEnd(8)} client CPU ${cpu.toFixed(1)} µs/cycle, wall ${wall.toFixed(1)} µs/cycle`,
      );
    }
    await Promise.all(loops.map((loop) => loop.close()));
  } else {
    const loop = await open(what as Mode, server.url);
    for (let i = 0; i < 500; i++) await loop.cycle(); // warm up
    const [cpu, wall] = await slice(loop, Number(process.argv[3] ?? 5) * 1000);
    console.log(`${what}: client CPU ${cpu.toFixed(1)} µs/cycle, wall ${wall.toFixed(1)} µs/cycle`);
    await loop.close();
  }
} finally {
  await server.stop();
}
