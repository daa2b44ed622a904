import { existsSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedisCluster, startRedisSentinel } from '../src/index.js';
import { isProcessAlive } from '../src/process-tree.js';

function role(url: string): Promise<string> {
  const client = new Redis(url, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  return client.call('ROLE').then(
    (reply) => {
      client.disconnect();
      return String((reply as unknown[])[0]);
    },
    (error: unknown) => {
      client.disconnect();
      throw error;
    },
  );
}

describe('startRedisCluster', () => {
  it('forms 3 primaries with a replica each; failover and killPrimary promote the replica; moveSlotOf moves a slot with its keys; stop leaves nothing', async () => {
    const cluster = await startRedisCluster();
    const pids = cluster.nodes.map((node) => node.pid as number);
    const directories = cluster.nodes.map((node) => node.describe().temporaryDirectory as string);
    try {
      expect(cluster.nodes).toHaveLength(6);
      expect(cluster.url).toBe(`redis+cluster://${cluster.seeds.join(',')}`);
      const roles = await Promise.all(cluster.nodes.map((node) => role(node.url)));
      expect(roles).toEqual(['master', 'master', 'master', 'slave', 'slave', 'slave']);
      const client = new Cluster(
        cluster.seeds.map((seed) => ({ host: '127.0.0.1', port: Number(seed.split(':')[1]) })),
      );
      try {
        await client.set('{k}', 'v');
        const owner = await cluster.primaryOf('{k}');
        expect(await role(owner.url)).toBe('master');
        const replica = await cluster.replicaOf(owner);
        const promoted = await cluster.failover(owner);
        expect(promoted).toBe(replica);
        expect(await role(promoted.url)).toBe('master');
        expect(await role(owner.url)).toBe('slave');
        expect(await cluster.primaryOf('{k}')).toBe(promoted);
        const survivor = await cluster.killPrimary(promoted);
        expect(survivor).toBe(owner);
        expect(await role(owner.url)).toBe('master');
        expect(await client.get('{k}')).toBe('v');
        await client.set('{k}:other', 'w');
        const move = await cluster.moveSlotOf('{k}');
        expect(move.from).toBe(owner);
        expect(move.to).not.toBe(owner);
        expect(await role(move.to.url)).toBe('master');
        expect(move.keys).toBe(2);
        expect(await cluster.primaryOf('{k}')).toBe(move.to);
        const direct = new Redis(move.to.url);
        try {
          expect(await direct.get('{k}:other')).toBe('w'); // served by the new owner itself
        } finally {
          direct.disconnect();
        }
        expect(await client.get('{k}')).toBe('v'); // the Cluster client follows MOVED
      } finally {
        client.disconnect();
      }
    } finally {
      await cluster.stop();
    }
    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(directories.filter((directory) => existsSync(directory))).toEqual([]);
  });
});

describe('startRedisSentinel', () => {
  it('runs a primary, 2 replicas and 3 Sentinels; failover and killPrimary move the primary; stop leaves nothing', async () => {
    const setup = await startRedisSentinel();
    const all = [...setup.servers, ...setup.sentinels];
    const pids = all.map((node) => node.pid as number);
    try {
      expect(setup.servers).toHaveLength(3);
      expect(setup.sentinels).toHaveLength(3);
      const first = await setup.primary();
      expect(first).toBe(setup.servers[0]);
      const second = await setup.failover();
      expect(second).not.toBe(first);
      expect(await role(second.url)).toBe('master');
      const third = await setup.killPrimary();
      expect(third).not.toBe(second);
      expect(await role(third.url)).toBe('master');
      // A client that asks the Sentinels finds the new primary.
      const client = new Redis({
        sentinels: setup.sentinels.map((sentinel) => ({
          host: sentinel.host,
          port: sentinel.port,
        })),
        name: setup.masterName,
      });
      try {
        await client.set('k', 'v');
        const info = String(await client.call('INFO', 'server'));
        expect(info).toContain(`tcp_port:${third.port}`);
      } finally {
        client.disconnect();
      }
    } finally {
      await setup.stop();
    }
    expect(pids.filter(isProcessAlive)).toEqual([]);
  });
});
