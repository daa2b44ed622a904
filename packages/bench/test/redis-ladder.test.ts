import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisLadder } from '../src/bench/redis-ladder.js';

// The cost ladder (pnpm --filter @lockkit/bench redis-costs) is only a measuring stick if each
// rung does what its label says: a lock that refuses a second holder, and from its rung on the
// fencing INCR, the cancel-marker check and the inspection record.
let servers: ServerHandle[] = [];
let admins: Redis[] = [];

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  admins = servers.map((server) => new Redis(server.url));
});

afterAll(async () => {
  for (const admin of admins) admin.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

/** Polls (one round trip at a time, for at most 5 s) until `name` and its record are gone. */
async function gone(node: Redis, name: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await node.exists(name, `${name}:holds`)) > 0) {
    if (Date.now() > deadline) throw new Error(`${name} still held on a node after 5 s`);
  }
}

const labels = [
  'SET NX PX + Lua release',
  '+ acquire as a Lua script',
  '+ fencing token (INCR)',
  '+ phantom-acquire guard, waiter wake-up',
  '+ inspection record',
];

describe.each([1, 3])('redisLadder on %i node(s)', (nodeCount) => {
  const urls = () => servers.slice(0, nodeCount).map((server) => server.url);

  it('has the five rungs, cheapest first', () => {
    expect(redisLadder('redis', urls()).map((rung) => rung.library)).toEqual(labels);
  });

  it.each(labels.map((label, index) => [label, index] as const))(
    '%s: one holder at a time, and exactly its guarantees on every node',
    async (_label, index) => {
      const rung = redisLadder('redis', urls())[index];
      if (!rung) throw new Error('no such rung');
      const client = await rung.open();
      const name = `ladder:${nodeCount}:${index}`;
      const nodes = admins.slice(0, nodeCount);
      try {
        const release = await client.acquire(name);
        await expect(client.acquire(name)).rejects.toThrow(`${name} is held`);
        const token = await nodes[0]?.get(name);
        expect(token).toMatch(/^[0-9a-f-]{36}$/);
        for (const node of nodes) {
          expect(await node.get(`${name}:fence`)).toBe(index >= 2 ? '1' : null);
          const record = await node.hget(`${name}:holds`, token ?? '');
          expect(record).toEqual(index >= 4 ? expect.stringMatching(/^1:\d+:bench$/) : null);
        }
        await release();
        // The release goes on at a majority: the last node may answer a moment later.
        for (const node of nodes) await gone(node, name);
        if (index >= 3) {
          // A cancel marker refuses the attempt: the guard is in the script.
          for (const node of nodes) await node.set(`${name}:cancel`, '1');
          await expect(client.acquire(name)).rejects.toThrow(`${name} is held`);
          for (const node of nodes) await node.del(`${name}:cancel`);
        }
        await (await client.acquire(name))();
      } finally {
        await client.close();
      }
    },
  );
});
