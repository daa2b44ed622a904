/**
 * `pnpm --filter @lockkit/zookeeper bench`: measures the ZooKeeper backend on a throwaway
 * server (or LOCKKIT_ZOOKEEPER_URL) and prints a table.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { LockHandle } from '@lockkit/core';
import { startZooKeeper } from '@lockkit/testkit';
import {
  createZooKeeperLockProvider,
  type WatchNotification,
  type ZooKeeperLockProvider,
  zookeeperChannelNames,
} from '../src/index.js';
import { zookeeperModule } from '../src/zookeeper-client.js';

const rounds = Number(process.env['BENCH_ROUNDS'] ?? 500);

function stats(samples: number[]): { mean: number; p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { mean, p50: at(0.5), p99: at(0.99) };
}

function call<T>(start: (done: (error: unknown, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    start((error, value) => (error ? reject(error) : resolve(value))),
  );
}

async function uncontended(provider: ZooKeeperLockProvider): Promise<number[]> {
  const lock = provider.createLock('bench-uncontended');
  const samples: number[] = [];
  for (let i = 0; i < rounds + 20; i++) {
    const started = performance.now();
    const handle = await lock.acquire();
    await handle.release();
    if (i >= 20) samples.push(performance.now() - started);
  }
  return samples;
}

async function rawCreateDelete(provider: ZooKeeperLockProvider): Promise<number[]> {
  const client = provider.currentClient!;
  const acl = zookeeperModule().ACL.OPEN_ACL_UNSAFE;
  await call<string>((done) => client.create('/bench-raw', undefined, acl, 0, done)).catch(
    () => '',
  );
  const samples: number[] = [];
  for (let i = 0; i < rounds + 20; i++) {
    const started = performance.now();
    const path = await call<string>((done) =>
      client.create('/bench-raw/n-', undefined, acl, 3, done),
    );
    await call<void>((done) => client.remove(path, -1, (error) => done(error, undefined)));
    if (i >= 20) samples.push(performance.now() - started);
  }
  await call<void>((done) => client.remove('/bench-raw', -1, (error) => done(error, undefined)));
  return samples;
}

/** A holds, B waits; time from A's release() call to B's grant. Then swap. */
async function handoff(a: ZooKeeperLockProvider, b: ZooKeeperLockProvider): Promise<number[]> {
  const samples: number[] = [];
  let holder = await a.createLock('bench-handoff').acquire();
  let next = b;
  let other = a;
  for (let i = 0; i < rounds; i++) {
    const waiting = next.createLock('bench-handoff').acquire();
    // let the waiter queue up (its node and watch are in place after ~2 round trips)
    await new Promise((resolve) => setTimeout(resolve, 2));
    const started = performance.now();
    void holder.release();
    holder = await waiting;
    samples.push(performance.now() - started);
    [next, other] = [other, next];
  }
  await holder.release();
  return samples;
}

async function herd(
  providers: ZooKeeperLockProvider[],
  kind: 'mutex' | 'semaphore',
): Promise<{ releases: number; notifications: number }> {
  const name = `bench-herd-${kind}`;
  const acquireOn = (provider: ZooKeeperLockProvider): Promise<LockHandle> =>
    kind === 'mutex'
      ? provider.createLock(name).acquire()
      : provider.createSemaphore(name, 3).acquire();
  const holders = await Promise.all(
    Array.from({ length: kind === 'mutex' ? 1 : 3 }, () => acquireOn(providers[0]!)),
  );
  const waiters: Promise<void>[] = [];
  let releases = holders.length;
  for (let i = 0; i < 50; i++) {
    waiters.push(
      acquireOn(providers[i % providers.length]!).then(async (handle) => {
        await handle.release();
        releases += 1;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5)); // arrive in order
  }
  let notifications = 0;
  const count = (message: unknown): void => {
    const event = message as WatchNotification;
    if (event.purpose !== 'own-node') notifications += 1;
  };
  subscribe(zookeeperChannelNames.watch, count);
  await Promise.all(holders.map((handle) => handle.release()));
  await Promise.all(waiters);
  unsubscribe(zookeeperChannelNames.watch, count);
  return { releases, notifications };
}

async function main(): Promise<void> {
  const server = await startZooKeeper({ tickTimeMs: 200 });
  const connectionString = server.url;
  const make = (): ZooKeeperLockProvider =>
    createZooKeeperLockProvider({ connectionString, sessionTimeoutMs: 4000 });
  const providers = [make(), make(), make(), make(), make()];
  try {
    await (await providers[0]!.createLock('warm-up').acquire()).release();
    await (await providers[1]!.createLock('warm-up').acquire()).release();
    const lockkit = stats(await uncontended(providers[0]!));
    const raw = stats(await rawCreateDelete(providers[0]!));
    const swap = stats(await handoff(providers[0]!, providers[1]!));
    const mutexHerd = await herd(providers, 'mutex');
    const semaphoreHerd = await herd(providers, 'semaphore');
    const ms = (value: number): string => `${value.toFixed(2)} ms`;
    const rows: [string, string, string, string][] = [
      ['uncontended acquire+release (lockkit)', ms(lockkit.mean), ms(lockkit.p50), ms(lockkit.p99)],
      ['raw create-ephemeral + delete (same client)', ms(raw.mean), ms(raw.p50), ms(raw.p99)],
      ['two-client handoff (release → grant)', ms(swap.mean), ms(swap.p50), ms(swap.p99)],
    ];
    const perRelease = (result: { releases: number; notifications: number }): string =>
      `${(result.notifications / (result.releases - 1)).toFixed(2)} (${result.notifications} / ${result.releases - 1})`;
    console.log(`ZooKeeper ${connectionString}, ${rounds} rounds, Node ${process.version}\n`);
    console.log('| measurement | mean | p50 | p99 |');
    console.log('| --- | --- | --- | --- |');
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);
    console.log('\n| 50 waiters, 5 clients | watch notifications per release |');
    console.log('| --- | --- |');
    console.log(`| mutex | ${perRelease(mutexHerd)} |`);
    console.log(`| semaphore(3) | ${perRelease(semaphoreHerd)} |`);
  } finally {
    await Promise.all(providers.map((provider) => provider.close()));
    await server.stop();
  }
}

await main();
