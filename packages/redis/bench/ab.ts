/**
 * `BENCH_BASELINE=<dir> pnpm --filter @lockkit/redis bench:ab` — an interleaved A/B of this
 * build (`dist/`) against a baseline build of the package (`<dir>`: another `dist/`, e.g.
 * built from main and copied under node_modules/ so its imports resolve), in one process, on
 * one throwaway redis-server. Each round runs every variant for one slice (order rotated per
 * round): A (baseline), B (this build) and A again (A′, the noise control: the same code,
 * another provider). Reports per-round ratios to A: B/A against A′/A shows what is change and
 * what is noise. Knobs: BENCH_ROUNDS (150), BENCH_SLICE_MS (30), BENCH_HANDOFFS (60).
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { ILockProvider } from '@lockkit/core';
import { startRedisServer } from '@lockkit/testkit';
import { createRedisLockProvider } from '../dist/index.js';

type Create = typeof createRedisLockProvider;

const baselineDir = process.env['BENCH_BASELINE'];
if (!baselineDir) throw new Error('BENCH_BASELINE=<directory of a baseline dist/> is required');
const baseline = (await import(pathToFileURL(resolve(baselineDir, 'index.js')).href)) as {
  createRedisLockProvider: Create;
};
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 150);
const sliceMs = Number(process.env['BENCH_SLICE_MS'] ?? 30);
const handoffs = Number(process.env['BENCH_HANDOFFS'] ?? 60);
const labels = ['A (baseline)', 'B (this build)', 'A′ (baseline again)'];
const creators: Create[] = [
  baseline.createRedisLockProvider,
  createRedisLockProvider,
  baseline.createRedisLockProvider,
];

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const pct = (x: number): string => `${Math.round(100 * x)} %`;
const summary = (xs: readonly number[]): string =>
  `${pct(quantile(xs, 0.5))} (IQR ${pct(quantile(xs, 0.25))}–${pct(quantile(xs, 0.75))})`;

/** Uncontended acquire+release cycles per second, per variant per round. */
async function uncontended(providers: readonly ILockProvider[]): Promise<number[][]> {
  const names = providers.map(() => `ab:uncontended:${randomUUID()}`);
  const rates: number[][] = providers.map(() => []);
  const warmup = Math.ceil(300 / sliceMs);
  for (let round = -warmup; round < rounds; round++) {
    for (let step = 0; step < providers.length; step++) {
      const index = (step + Math.max(0, round)) % providers.length;
      const lock = providers[index]!.createLock(names[index]!);
      let cycles = 0;
      const started = performance.now();
      while (performance.now() - started < sliceMs) {
        await (await lock.acquire({ timeout: 5000 })).release();
        cycles += 1;
      }
      if (round >= 0) rates[index]!.push((cycles * 1000) / (performance.now() - started));
    }
  }
  return rates;
}

/** Release-to-grant latency (ms) of a waiter on another provider, per variant per round. */
async function handoff(
  pairs: readonly (readonly [ILockProvider, ILockProvider])[],
): Promise<number[][]> {
  const samples: number[][] = pairs.map(() => []);
  for (let round = 0; round < handoffs; round++) {
    for (let step = 0; step < pairs.length; step++) {
      const index = (step + round) % pairs.length;
      const [holder, waiter] = pairs[index]!;
      const name = `ab:handoff:${index}`;
      const held = await holder.createLock(name).acquire({ timeout: 5000 });
      const next = waiter
        .createLock(name)
        .acquire({ timeout: 5000 })
        .then((handle) => ({ handle, at: performance.now() }));
      await sleep(20 + Math.random() * 20); // the waiter settles into its wait
      const releasedAt = performance.now();
      await held.release();
      const { handle, at } = await next;
      samples[index]!.push(at - releasedAt);
      await handle.release();
    }
  }
  return samples;
}

const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';
const loadBefore = load();
const server = await startRedisServer({ useEnvironment: false });
try {
  const providers = creators.map((create) => create({ nodes: server.url }));
  const waiters = creators.map((create) => create({ nodes: server.url }));
  process.stderr.write(
    `uncontended: ${rounds} rounds × ${sliceMs} ms; handoff: ${handoffs} rounds…\n`,
  );
  const rates = await uncontended(providers);
  const latencies = await handoff(providers.map((p, i) => [p, waiters[i]!] as const));
  await Promise.all([...providers, ...waiters].map((p) => p.close()));
  const ratio = (i: number): number[] => rates[i]!.map((rate, round) => rate / rates[0]![round]!);
  const handoffRatio = (i: number): number[] =>
    latencies[i]!.map((ms, round) => ms / latencies[0]![round]!);
  console.log(
    '| variant | uncontended acq+rel/s (median) | per-round ratio to A | handoff p50 | per-round handoff ratio to A |',
  );
  console.log('|---|---|---|---|---|');
  for (const [i, label] of labels.entries()) {
    console.log(
      `| ${label} | ${Math.round(quantile(rates[i]!, 0.5))} | ${i === 0 ? '—' : summary(ratio(i))} | ${quantile(latencies[i]!, 0.5).toFixed(2)} ms | ${i === 0 ? '—' : summary(handoffRatio(i))} |`,
    );
  }
  console.log(
    `\nNode ${process.version}; load average (1 min) before ${loadBefore}, after ${load()}.`,
  );
} finally {
  await server.stop();
}
