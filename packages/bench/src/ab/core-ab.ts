/**
 * `pnpm --filter @lockkit/bench core-ab <baseline-core-dist>` (or `bash scripts/core-ab.sh <git-ref>`,
 * which builds that ref's core first): an interleaved A/B of two builds of `@lockkit/core`'s
 * policy on the same backends, servers and process. Each round runs a slice of uncontended
 * acquire+release on the baseline and on the current core, in alternating order, and one
 * handoff each (a waiter on a second provider, timed from the holder's release to the grant).
 * Prints the median ratio (current / baseline) with its interquartile range per backend:
 * simpler code that stays within the spread wins (the performance budget in
 * packages/core/src/acquire-policy.ts). Knobs: AB_ROUNDS (60), AB_SLICE_MS (30).
 */

import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { ILockProvider } from '@lockkit/core';
import { LockProvider } from '@lockkit/core/backend';
import { PostgresLockBackend, resolvePostgresOptions } from '@lockkit/postgres';
import { RedisLockBackend, resolveRedisOptions } from '@lockkit/redis';
import { startPostgres, startRedisServer } from '@lockkit/testkit';

type Backend = ConstructorParameters<typeof LockProvider>[0];
type ProviderClass = new (backend: Backend) => ILockProvider;

const baselineDir = process.argv[2];
if (!baselineDir) {
  console.error('usage: core-ab <baseline @lockkit/core dist directory>');
  process.exit(64);
}
// LockProvider is in the backend-author entry from the split on (the main entry before it).
const entry = existsSync(`${baselineDir}/for-backends.js`) ? 'for-backends.js' : 'index.js';
const baseline = (await import(pathToFileURL(`${baselineDir}/${entry}`).href)) as {
  LockProvider: ProviderClass;
};
const rounds = Number(process.env['AB_ROUNDS'] ?? 60);
const sliceMs = Number(process.env['AB_SLICE_MS'] ?? 30);

interface Variant {
  readonly label: 'baseline' | 'current';
  readonly Provider: ProviderClass;
}
const variants: readonly Variant[] = [
  { label: 'baseline', Provider: baseline.LockProvider },
  { label: 'current', Provider: LockProvider },
];

/** Uncontended acquire+release per second on `provider`, over one slice. */
async function uncontended(provider: ILockProvider, name: string): Promise<number> {
  const lock = provider.createLock(name);
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < sliceMs) {
    const handle = await lock.acquire({ timeout: 5_000 });
    await handle.release();
    count += 1;
  }
  return (count * 1000) / (performance.now() - started);
}

/** ms from the holder's release to the waiter's grant. */
async function handoff(a: ILockProvider, b: ILockProvider, name: string): Promise<number> {
  const held = await a.createLock(name).acquire({ timeout: 5_000 });
  let released = 0;
  const waiter = b
    .createLock(name)
    .acquire({ timeout: 10_000 })
    .then((handle) => {
      const ms = performance.now() - released;
      return handle.release().then(() => ms);
    });
  await new Promise((resolve) => setTimeout(resolve, 20)); // let the waiter queue up
  released = performance.now();
  await held.release();
  return waiter;
}

function quantile(sorted: readonly number[], q: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[index]!;
}

function summary(values: number[]): string {
  values.sort((x, y) => x - y);
  return `${quantile(values, 0.5).toFixed(3)} (IQR ${quantile(values, 0.25).toFixed(3)}–${quantile(values, 0.75).toFixed(3)})`;
}

async function compare(label: string, makeBackend: () => Backend): Promise<string[]> {
  const providers = variants.map(({ Provider }) => [
    new Provider(makeBackend()),
    new Provider(makeBackend()),
  ]);
  const ratios: number[] = [];
  const handoffs: [number[], number[]] = [[], []];
  for (let round = -3; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    const rate: number[] = [0, 0];
    for (const index of order) {
      const [a, b] = providers[index]!;
      rate[index] = await uncontended(a!, `ab:${label}:u${index}`);
      const ms = await handoff(a!, b!, `ab:${label}:h${index}`);
      if (round >= 0) handoffs[index]!.push(ms);
    }
    if (round >= 0) ratios.push(rate[1]! / rate[0]!); // rounds < 0 warm up
  }
  for (const pair of providers) for (const provider of pair) await provider.close();
  return [
    `| ${label} | uncontended, current / baseline | ${summary(ratios)} |`,
    `| ${label} | handoff ms, baseline | ${summary(handoffs[0])} |`,
    `| ${label} | handoff ms, current | ${summary(handoffs[1])} |`,
  ];
}

const redis = await startRedisServer();
const postgres = await startPostgres();
try {
  const rows = [
    ...(await compare(
      'Redis',
      () => new RedisLockBackend(resolveRedisOptions({ nodes: redis.url })),
    )),
    ...(await compare(
      'PostgreSQL',
      () => new PostgresLockBackend(resolvePostgresOptions({ connection: postgres.url })),
    )),
  ];
  console.log(
    `\n${rounds} interleaved rounds of ${sliceMs} ms; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}\n`,
  );
  console.log('| backend | measure | median (IQR) |\n| --- | --- | --- |');
  for (const row of rows) console.log(row);
} finally {
  await redis.stop();
  await postgres.stop();
}
