/**
 * `bash scripts/ab.sh <git-ref>` (which builds that ref's workspace in a scratch worktree and
 * runs `pnpm --filter @lockkit/bench ab <its directory>`): an interleaved A/B of the packages
 * at a git ref (A, the baseline) against this checkout's build (B), on the same throwaway
 * servers, in one process, through each package's public factory — so it compares whole
 * changes (core policy and backend I/O together), the way a user upgrading would see them.
 *
 * Each round runs, in rotated order, a slice of uncontended acquire+release, one handoff
 * (a waiter on a second provider, timed from the holder's release to the grant) and a slice
 * of 8 workers on one lock (each on its own provider: acquire, hold 1 ms, release, think 1 ms)
 * for A, B and A again (A′, the noise control: the same code as A, its own providers). Per-round ratios
 * to A are reported as median (IQR): B/A is the change, A′/A is what identical code scatters.
 * The servers run with their durable defaults, as in `pnpm bench`.
 * Knobs: AB_ROUNDS (40), AB_SLICE_MS (30), AB_WORKERS_MS (300 per 8-worker slice; 0: none),
 * AB_BACKENDS (redis,redlock,postgres,mysql,zookeeper;
 * etcd too, on request),
 * AB_B_OPTIONS (JSON provider options for B only, e.g. `{"recordHolds":false}` to leave out a
 * feature the baseline did not have).
 */

import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { ILockProvider } from '@lockkit/core';
import { createEtcdLockProvider } from '@lockkit/etcd';
import { createMySqlLockProvider } from '@lockkit/mysql';
import { createPostgresLockProvider } from '@lockkit/postgres';
import { createRedisLockProvider } from '@lockkit/redis';
import { createZooKeeperLockProvider } from '@lockkit/zookeeper';
import mysql from 'mysql2/promise';
import type { BackendId } from '../backends/backend-ids.js';
import { type Lab, startLab } from '../backends/lab.js';
import { quantile } from '../support/statistics.js';

type Factories = {
  readonly createRedisLockProvider: (options: { nodes: string[] }) => ILockProvider;
  readonly createPostgresLockProvider: (options: { connection: string }) => ILockProvider;
  readonly createMySqlLockProvider: (options: { connection: string }) => ILockProvider;
  readonly createZooKeeperLockProvider: (options: { connectionString: string }) => ILockProvider;
  readonly createEtcdLockProvider: (options: { hosts: string }) => ILockProvider;
};
type Options = Record<string, unknown>;

const baselineDir = process.argv[2];
if (!baselineDir) {
  console.error('usage: ab <baseline workspace directory (built)>');
  process.exit(64);
}
const backends = (process.env['AB_BACKENDS'] ?? 'redis,redlock,postgres,mysql,zookeeper').split(
  ',',
);
const fromBaseline = async (name: string): Promise<Record<string, unknown>> =>
  import(pathToFileURL(join(baselineDir, 'packages', name, 'dist', 'index.js')).href);
const baseline = {
  ...(await fromBaseline('redis')),
  ...(await fromBaseline('postgres')),
  ...(await fromBaseline('mysql')),
  ...(await fromBaseline('zookeeper')),
  // Only when asked for: refs from before the etcd package have none.
  ...(backends.includes('etcd') ? await fromBaseline('etcd') : {}),
} as unknown as Factories;
const current: Factories = {
  createRedisLockProvider: createRedisLockProvider as Factories['createRedisLockProvider'],
  createPostgresLockProvider: createPostgresLockProvider as Factories['createPostgresLockProvider'],
  createMySqlLockProvider: createMySqlLockProvider as Factories['createMySqlLockProvider'],
  createZooKeeperLockProvider:
    createZooKeeperLockProvider as Factories['createZooKeeperLockProvider'],
  createEtcdLockProvider: createEtcdLockProvider as Factories['createEtcdLockProvider'],
};
const rounds = Number(process.env['AB_ROUNDS'] ?? 40);
const sliceMs = Number(process.env['AB_SLICE_MS'] ?? 30);
const workersMs = Number(process.env['AB_WORKERS_MS'] ?? 300);
const workerCount = 8;
const bOptions = JSON.parse(process.env['AB_B_OPTIONS'] ?? '{}') as Options;

/** A provider of one build on one backend of the lab. */
function open(build: Factories, backend: string, lab: Lab, extra: Options): ILockProvider {
  const urls = lab.serversOf(backend as BackendId).map((server) => server.url);
  if (backend === 'redis' || backend === 'redlock')
    return build.createRedisLockProvider({ ...extra, nodes: urls });
  if (backend === 'postgres')
    return build.createPostgresLockProvider({ ...extra, connection: urls[0]! });
  if (backend === 'zookeeper')
    return build.createZooKeeperLockProvider({
      ...extra,
      connectionString: `zookeeper://${urls[0]!.replace(/^zookeeper:\/\//, '')}`,
    });
  if (backend === 'etcd')
    return build.createEtcdLockProvider({ ...extra, hosts: urls[0]!.replace(/^etcd:\/\//, '') });
  // A database per build: the builds' tables (hold rows, fencing counters) may differ in shape
  // or engine, and a table is created by whichever build comes first.
  const url = new URL(urls[0]!);
  url.pathname = build === current ? '/ab_b' : '/ab_a';
  return build.createMySqlLockProvider({ ...extra, connection: url.href });
}

async function createDatabases(lab: Lab): Promise<void> {
  if (!lab.backends.includes('mysql')) return;
  const admin = await mysql.createConnection(lab.serversOf('mysql')[0]!.url);
  for (const name of ['ab_a', 'ab_b']) await admin.query(`CREATE DATABASE IF NOT EXISTS ${name}`);
  await admin.end();
}

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
  await new Promise((resolve) => setTimeout(resolve, 20)); // let the waiter settle into its wait
  released = performance.now();
  await held.release();
  return waiter;
}

/** Critical sections per second of workers (one provider each) on one lock, over one slice. */
async function contended(providers: readonly ILockProvider[], name: string): Promise<number> {
  const started = performance.now();
  let count = 0;
  await Promise.all(
    providers.map(async (provider) => {
      const lock = provider.createLock(name);
      while (performance.now() - started < workersMs) {
        const handle = await lock.acquire({ timeout: 10_000 });
        await sleep(1);
        await handle.release();
        count += 1;
        await sleep(1);
      }
    }),
  );
  return (count * 1000) / (performance.now() - started);
}

function summary(values: number[], scale = 1, digits = 0): string {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => (quantile(sorted, q) * scale).toFixed(digits);
  return `${at(0.5)} (${at(0.25)}–${at(0.75)})`;
}

async function compare(backend: string, lab: Lab): Promise<string> {
  const builds = [baseline, current, baseline];
  const pairs = builds.map((build) => {
    const extra = build === current ? bOptions : {};
    return [open(build, backend, lab, extra), open(build, backend, lab, extra)];
  });
  const crowds = builds.map((build) => {
    const extra = build === current ? bOptions : {};
    const size = workersMs > 0 ? workerCount : 0;
    return Array.from({ length: size }, () => open(build, backend, lab, extra));
  });
  const rates: number[][] = [[], [], []];
  const handoffs: number[][] = [[], [], []];
  const crowdRates: number[][] = [[], [], []];
  for (let round = -3; round < rounds; round++) {
    const order = [0, 1, 2].map((_, i) => (i + round + 3) % 3); // rotated each round
    const rate = [0, 0, 0];
    for (const index of order) {
      const [a, b] = pairs[index]!;
      rate[index] = await uncontended(a!, `ab:${backend}:u${index}`);
      const ms = await handoff(a!, b!, `ab:${backend}:h${index}`);
      if (round >= 0) handoffs[index]!.push(ms);
      if (workersMs <= 0) continue;
      const crowd = await contended(crowds[index]!, `ab:${backend}:w${index}`);
      if (round >= 0) crowdRates[index]!.push(crowd);
    }
    if (round >= 0) for (const index of [0, 1, 2]) rates[index]!.push(rate[index]!); // warm-up
  }
  for (const provider of [...pairs, ...crowds].flat()) await provider.close();
  const ratio = (of: number[][], index: number) =>
    of[index]!.map((value, round) => value / of[0]![round]!);
  const workers =
    workersMs > 0
      ? ` ${summary(crowdRates[0]!)} | ${summary(ratio(crowdRates, 1), 100)} % | ${summary(ratio(crowdRates, 2), 100)} % |`
      : ' — | — | — |';
  return `| ${backend} | ${summary(rates[0]!)} | ${summary(ratio(rates, 1), 100)} % | ${summary(ratio(rates, 2), 100)} % | ${summary(handoffs[0]!, 1, 2)} | ${summary(handoffs[1]!, 1, 2)} | ${summary(handoffs[2]!, 1, 2)} |${workers}`;
}

const lab = await startLab(
  backends.filter((id): id is BackendId =>
    ['redis', 'redlock', 'postgres', 'mysql', 'zookeeper', 'etcd'].includes(id),
  ),
  'bench',
);
try {
  await createDatabases(lab);
  const rows: string[] = [];
  for (const backend of lab.backends) rows.push(await compare(backend, lab));
  console.log(
    `\n${rounds} interleaved rounds of ${sliceMs} ms uncontended and ${workersMs} ms of ${workerCount} workers (A, B${Object.keys(bOptions).length ? ` with ${JSON.stringify(bOptions)}` : ''}, A′ rotated); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}\n`,
  );
  console.log(
    '| backend | A acquire+release/s | B/A | A′/A (noise) | handoff ms A | B | A′ | 8 workers CS/s A | B/A | A′/A (noise) |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const row of rows) console.log(row);
} finally {
  await lab.stop();
}
