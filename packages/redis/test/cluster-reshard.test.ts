import { type RedisCluster, startRedisCluster } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { command, tokenOf } from './failover-support.js';
import { testLeaseMs } from './support.js';

// A lock's slot moves to another primary between two attempts. ioredis follows MOVED by
// itself for a lone script; with acknowledgement the script and its WAIT go in one pipeline,
// which ioredis does not redirect (WAIT is not read-only), so the provider must.
let cluster: RedisCluster;
const providers: RedisLockProvider[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await Promise.all(providers.map((each) => each.close()));
  await cluster?.stop();
});

function provider(minReplicas: number): RedisLockProvider {
  const created = createRedisLockProvider({
    nodes: cluster.url,
    leaseMs: testLeaseMs,
    commandTimeoutMs: 250,
    ...(minReplicas > 0 && { minReplicas, replicaTimeoutMs: 200 }),
  });
  providers.push(created);
  return created;
}

describe('Redis Cluster: a lock whose slot was moved', { timeout: 60_000 }, () => {
  for (const minReplicas of [0, 1]) {
    it(`minReplicas ${minReplicas}: the first attempt after the move is granted by the new owner, with the next token`, async () => {
      const name = `moved-${minReplicas}`;
      const locks = provider(minReplicas);
      const before = await tokenOf(locks, name); // the client knows the old owner now
      const keys = redisLockKeys('', 'mutex', name);
      const move = await cluster.moveSlotOf(keys.lock);
      expect(move.keys).toBeGreaterThanOrEqual(1); // the fencing counter went along
      expect((await cluster.primaryOf(keys.lock)).port).toBe(move.to.port);
      const granted = await locks.createLock(name).tryAcquire(); // one attempt, no retry
      expect(granted?.fencingToken).toBe(before + 1n);
      await granted?.release();
      expect(await command(move.to, 'GET', keys.fence)).toBe(String(before + 1n));
    });
  }
});
