import { BackendUnavailableError } from '@lockkit/core';
import { type RedisCluster, startRedisCluster } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { cutReplication, healReplication, tokenOf } from './failover-support.js';
import { testLeaseMs } from './support.js';

// One Cluster (3 primaries, a replica each) for the file. Each case kills the primary of its
// lock's slot; the two locks live on different primaries.
let cluster: RedisCluster;
const providers: RedisLockProvider[] = [];

function provider(minReplicas: number): RedisLockProvider {
  const created = createRedisLockProvider({
    nodes: cluster.url,
    leaseMs: testLeaseMs,
    commandTimeoutMs: 250,
    minReplicas,
    replicaTimeoutMs: 200,
  });
  providers.push(created);
  return created;
}

/** Two lock names whose slots are served by different primaries. */
async function namesOnTwoPrimaries(): Promise<[string, string]> {
  const owner = (name: string) => cluster.primaryOf(redisLockKeys('', 'mutex', name).lock);
  const first = 'fence-0';
  const firstOwner = await owner(first);
  for (let index = 1; ; index++) {
    const name = `fence-${index}`;
    if ((await owner(name)) !== firstOwner) return [first, name];
  }
}

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await Promise.all(providers.map((each) => each.close()));
  await cluster?.stop();
});

describe('Redis Cluster: fencing tokens across a failover', { timeout: 120_000 }, () => {
  it('without acknowledgement a token is handed out twice; with minReplicas 1 tokens keep increasing', async () => {
    const [plainName, ackedName] = await namesOnTwoPrimaries();
    const keyOf = (name: string) => redisLockKeys('', 'mutex', name).lock;

    // Without acknowledgement: the grant before the crash reached no replica.
    const plain = provider(0);
    const before = await tokenOf(plain, plainName);
    let primary = await cluster.primaryOf(keyOf(plainName));
    let replica = await cluster.replicaOf(primary);
    await cutReplication(primary, [replica]);
    const lost = await tokenOf(plain, plainName);
    expect(lost).toBe(before + 1n);
    await cluster.killPrimary(primary);
    await healReplication([replica]);
    expect(await tokenOf(plain, plainName)).toBe(lost); // the known hazard: the same token twice

    // With acknowledgement (another primary, which still has its replica).
    const acked = provider(1);
    const other = provider(0);
    const tokens = [await tokenOf(acked, ackedName)];
    primary = await cluster.primaryOf(keyOf(ackedName));
    replica = await cluster.replicaOf(primary);
    await cutReplication(primary, [replica]);
    const refused = acked.createLock(ackedName).tryAcquire();
    await expect(refused).rejects.toThrow(BackendUnavailableError);
    await expect(refused).rejects.toThrow(/0 of 1 replicas acknowledged acquire-mutex/);
    const free = await other.createLock(ackedName).tryAcquire();
    expect(free).not.toBeNull(); // the refused grant was released
    await free?.release();
    const promoted = await cluster.killPrimary(primary);
    await healReplication([replica]);
    // The promoted primary has no replica left: acknowledged grants fail until one joins.
    await expect(acked.createLock(ackedName).tryAcquire()).rejects.toThrow(BackendUnavailableError);
    const next = await tokenOf(other, ackedName);
    expect(next).toBeGreaterThan(tokens[0] as bigint);
    expect(promoted.port).toBe(replica.port);
  });
});
