import { delay } from '@lockkit/core/backend';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { eventually, scaled, testLeaseMs } from './support.js';

// A three-master Redis Cluster of our own (slots split three ways, no replicas).
let servers: ServerHandle[] = [];
const clusters: Cluster[] = [];
const providers: RedisLockProvider[] = [];

beforeAll(async () => {
  servers = await startRedisServers(3, {
    useEnvironment: false,
    extraArguments: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
  });
  const admins = servers.map((server) => new Redis(server.url));
  try {
    const ranges = [
      [0, 5460],
      [5461, 10922],
      [10923, 16383],
    ] as const;
    await Promise.all(
      admins.map((admin, index) => admin.call('CLUSTER', 'ADDSLOTSRANGE', ...ranges[index]!)),
    );
    for (const server of servers.slice(1)) {
      await admins[0]!.call('CLUSTER', 'MEET', server.host, String(server.port));
    }
    await eventually(async () => {
      const infos = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO')));
      return infos.every((info) => String(info).includes('cluster_state:ok'));
    }, 20_000);
  } finally {
    for (const admin of admins) admin.disconnect();
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  for (const cluster of clusters) cluster.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

/** Subscribers of `channel` on each node: [classic, sharded] per node. */
async function subscribers(channel: string): Promise<[number, number][]> {
  return Promise.all(
    servers.map(async (server) => {
      const admin = new Redis(server.url);
      try {
        const classic = (await admin.pubsub('NUMSUB', channel)) as (string | number)[];
        const sharded = (await admin.call('PUBSUB', 'SHARDNUMSUB', channel)) as unknown[];
        return [Number(classic[1] ?? 0), Number(sharded[1] ?? 0)];
      } finally {
        admin.disconnect();
      }
    }),
  );
}

/** The node (index into `servers`) that owns `key`'s slot. */
async function ownerOf(key: string): Promise<number> {
  const admin = new Redis(servers[0]!.url);
  try {
    const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', key));
    const shards = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const owner = shards.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
    return servers.findIndex((server) => server.port === owner);
  } finally {
    admin.disconnect();
  }
}

async function clusterProvider(
  options: { pollIntervalMs?: number } = {},
): Promise<RedisLockProvider> {
  const cluster = new Cluster(servers.map((server) => ({ host: server.host, port: server.port })));
  clusters.push(cluster);
  // Connected first: a fresh Cluster client's discovery can take longer than one command's
  // deadline on a loaded machine, and what these tests are about starts after that.
  await new Promise((resolve, reject) => {
    cluster.once('ready', resolve);
    cluster.once('error', reject);
  });
  const provider = createRedisLockProvider({
    nodes: cluster,
    leaseMs: testLeaseMs,
    commandTimeoutMs: 250,
    ...options,
  });
  providers.push(provider);
  return provider;
}

describe('Redis Cluster (injected ioredis Cluster client)', () => {
  it('locks of many names spread over the slots; each lock’s keys share one slot', async () => {
    const [p1, p2] = [await clusterProvider(), await clusterProvider()];
    for (let index = 0; index < 12; index++) {
      const name = `cluster-${index}`;
      const held = [
        await p1.createLock(name).acquire({ timeout: 5000 }),
        await p1.createReadWriteLock(name).acquireRead({ timeout: 5000 }),
        await p1.createSemaphore(name, 2).acquire({ timeout: 5000 }),
      ];
      expect(await p2.createLock(name).tryAcquire()).toBeNull();
      expect(await p2.createReadWriteLock(name).tryAcquireWrite()).toBeNull();
      for (const handle of held) expect(await handle.release()).toBe(true);
    }
  });

  it('a waiter on another client is woken by the release (sharded pub/sub on the slot owner)', async () => {
    // The waiter's safety poll is a minute and the lock's lease is extended: only the release
    // message can wake it before its 10 s timeout.
    const [p1, p2] = [await clusterProvider(), await clusterProvider({ pollIntervalMs: 60_000 })];
    const held = await p1.createLock('cluster-handoff').acquire({ timeout: 5000 });
    const waiting = p2.createLock('cluster-handoff').acquire({ timeout: 10_000 });
    const { lock, waiters, channel } = redisLockKeys('', 'mutex', 'cluster-handoff');
    const owner = await ownerOf(lock);
    // It waits: registered by its retry, and subscribed (sharded) on the node that owns the
    // lock's slot — the node whose release script publishes — and nowhere else.
    await eventually(async () => (await clusters[0]!.zcard(waiters)) === 1, 5000);
    await eventually(async () => {
      const counts = await subscribers(channel);
      return counts.every(
        ([classic, sharded], node) => classic === 0 && sharded === (node === owner ? 1 : 0),
      );
    }, 5000);
    const releasedAt = performance.now();
    await held.release();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(scaled(100)); // the message, at once
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    expect(await next.release()).toBe(true);
  });

  it('leases are extended on the cluster like on one node', async () => {
    const [p1, p2] = [await clusterProvider(), await clusterProvider()];
    const held = await p1.createSemaphore('cluster-lease', 1).acquire({ timeout: 5000 });
    await delay(2 * testLeaseMs);
    expect(held.signal.aborted).toBe(false);
    expect(await p2.createSemaphore('cluster-lease', 1).tryAcquire()).toBeNull();
    expect(await held.release()).toBe(true);
  });
});
