import { redisLockKeys } from '@lockkit/redis';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisLadder } from '../src/bench/redis-ladder.js';

// The cost ladder (pnpm --filter @lockkit/bench redis-costs) is only a measuring stick if each
// rung does what its label says: a lock that refuses a second holder, and from its rung on the
// fencing INCR, the cancel-marker check and the inspection record; the last rung and lockkit's
// backend alone on lockkit's own key names.
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

/** The keys a rung writes for `name`: short ones, or from the sixth row on lockkit's. */
function keysOf(index: number, name: string): { lock: string; fence: string; holds: string } {
  if (index >= 5) return redisLockKeys('', 'mutex', name);
  return { lock: name, fence: `${name}:fence`, holds: `${name}:holds` };
}

/**
 * Polls (one round trip at a time, for at most 5 s) until `node` holds the lock (`held`), or
 * until neither the lock nor its record is left. An acquire or release goes on at a majority:
 * the last node may run it a moment later.
 */
async function until(
  node: Redis,
  keys: { lock: string; holds: string },
  held: boolean,
): Promise<void> {
  const deadline = Date.now() + 5_000;
  const settled = async () =>
    held ? (await node.exists(keys.lock)) === 1 : (await node.exists(keys.lock, keys.holds)) === 0;
  while (!(await settled())) {
    if (Date.now() > deadline) {
      throw new Error(`${keys.lock} ${held ? 'not held' : 'still held'} on a node after 5 s`);
    }
  }
}

const labels = [
  'SET NX PX + Lua release',
  '+ acquire as a Lua script',
  '+ fencing token (INCR)',
  '+ phantom-acquire guard, waiter wake-up',
  '+ inspection record',
  "+ lockkit's key names",
  "+ Redlock's release: fence floor",
  "lockkit's backend alone (no provider)",
];
/** The rows on `nodeCount` nodes: the fence floor is Redlock's alone. */
const labelsOn = (nodeCount: number): string[] =>
  labels.filter((label) => nodeCount > 1 || !label.includes('fence floor'));

describe.each([1, 3])('redisLadder on %i node(s)', (nodeCount) => {
  const urls = () => servers.slice(0, nodeCount).map((server) => server.url);

  it('has its rungs, cheapest first, then the backend alone', () => {
    expect(redisLadder('redis', urls()).map((rung) => rung.library)).toEqual(labelsOn(nodeCount));
  });

  it.each(labelsOn(nodeCount).map((label, index) => [label, index] as const))(
    '%s: one holder at a time, and exactly its guarantees on every node',
    async (label, index) => {
      const rung = redisLadder('redis', urls())[index];
      if (!rung) throw new Error('no such rung');
      const client = await rung.open();
      const name = `ladder:${nodeCount}:${index}`;
      const keys = keysOf(index, name);
      const nodes = admins.slice(0, nodeCount);
      try {
        const release = await client.acquire(name);
        await expect(client.acquire(name)).rejects.toThrow(`${name} is held`);
        for (const node of nodes) await until(node, keys, true);
        const token = await nodes[0]?.get(keys.lock);
        expect(token).toMatch(/^[0-9a-f-]{36}$/);
        for (const node of nodes) {
          expect(await node.get(keys.fence)).toBe(index >= 2 ? '1' : null);
          // '<fencing token>:<since ms>:<owner>', the owner being '<host>:<pid>' as lockkit's.
          const record = await node.hget(keys.holds, token ?? '');
          expect(record).toEqual(
            index >= 4 ? expect.stringMatching(new RegExp(`^1:\\d+:.+:${process.pid}$`)) : null,
          );
        }
        // Redlock's release lifts a counter that lags the grant's token back up to it.
        const floored = label.includes('fence floor');
        if (floored) await nodes[2]?.set(keys.fence, '0');
        await release();
        for (const node of nodes) await until(node, keys, false);
        if (floored) for (const node of nodes) expect(await node.get(keys.fence)).toBe('1');
        if (index === 3 || index === 4) {
          // A cancel marker refuses the attempt: the guard is in the script (on lockkit's key
          // names the marker is per attempt, as in lockkit; its own tests cover it there).
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
