import { type LockHandle, LockLostError } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisLockProvider,
  type RedisGrant,
  type RedisLockProvider,
  type RedisLockProviderOptions,
  redisLockKeys,
} from '../src/index.js';
import { eventually, scaled, testLeaseMs } from './support.js';

// Own servers: nodes are paused below, which must not disturb other files.
let servers: ServerHandle[] = [];
let raw: Redis[] = [];
const providers: RedisLockProvider[] = [];

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  raw = servers.map((server) => new Redis(server.url));
});

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  for (const client of raw) client.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

type Hold = 'mutex' | 'read' | 'write' | 'semaphore';
const holds: readonly Hold[] = ['mutex', 'read', 'write', 'semaphore'];

function acquire(provider: RedisLockProvider, name: string, hold: Hold): Promise<LockHandle> {
  const timeout = scaled(2000);
  if (hold === 'mutex') return provider.createLock(name).acquire({ timeout });
  if (hold === 'semaphore') {
    return provider.createSemaphore(name, 2).acquire({ timeout, permits: 2 });
  }
  const lock = provider.createReadWriteLock(name);
  return hold === 'read' ? lock.acquireRead({ timeout }) : lock.acquireWrite({ timeout });
}

function resume(
  provider: RedisLockProvider,
  name: string,
  hold: Hold,
  token: string,
): Promise<LockHandle> {
  if (hold === 'mutex') return provider.createLock(name).resume(token);
  if (hold === 'semaphore') return provider.createSemaphore(name, 2).resume(token);
  return provider.createReadWriteLock(name).resume(token);
}

/** The hold's entries on a node: token-bearing members or the string value, and records. */
async function entriesOn(client: Redis, handle: LockHandle): Promise<string[]> {
  const { request } = grantBehind<RedisGrant>(handle);
  const keys = redisLockKeys(request.namespace, request.kind, request.name);
  const records = await client.hkeys(keys.holds);
  if (request.kind === 'read') return [...(await client.zrange(keys.readers, 0, -1)), ...records];
  if (request.kind === 'semaphore') return [...(await client.zrange(keys.lock, 0, -1)), ...records];
  const value = await client.get(keys.lock);
  return [...(value === null ? [] : [value]), ...records];
}

const topologies = [
  { title: 'one node', count: 1 },
  { title: 'Redlock, 3 nodes', count: 3 },
] as const;

for (const { title, count } of topologies) {
  describe(`hand-over on ${title}: a token is resumed once`, () => {
    function provider(options: Partial<RedisLockProviderOptions> = {}): RedisLockProvider {
      const nodes = servers.slice(0, count).map((server) => server.url);
      const created = createRedisLockProvider({
        leaseMs: testLeaseMs,
        commandTimeoutMs: 200,
        ...options,
        nodes,
      });
      providers.push(created);
      return created;
    }

    for (const hold of holds) {
      it(`${hold}: the first resume wins; a second one and the exporter are refused`, async () => {
        const [a, b, c] = [provider(), provider(), provider()];
        const name = `hand-over-once-${count}-${hold}`;
        const held = await acquire(a, name, hold);
        const exported = grantBehind<RedisGrant>(held).grant.token;
        const token = held.export();
        const resumed = await resume(b, name, hold, token);
        expect(resumed.fencingToken).toBe(held.fencingToken);
        const fresh = grantBehind<RedisGrant>(resumed).grant.token;
        expect(fresh).not.toBe(exported);
        // On every node (a Redlock resume is decided by a quorum, so the last node may still
        // be running it): the hold, all its permits, and its inspection record moved.
        const moved = hold === 'semaphore' ? 3 : 2;
        for (const client of raw.slice(0, count)) {
          await eventually(async () => {
            const entries = await entriesOn(client, resumed);
            return (
              !entries.some((entry) => entry.startsWith(exported)) &&
              entries.filter((entry) => entry.startsWith(fresh)).length === moved
            );
          }, 2000);
        }
        await expect(resume(c, name, hold, token)).rejects.toSatisfy(LockLostError.isInstance);
        expect(resumed.signal.aborted).toBe(false);
        expect(await resumed.extend()).toBe(true);
        expect(await held.release()).toBe(false);
        expect(await resumed.release()).toBe(true);
        const next = await acquire(c, name, hold);
        expect(next.fencingToken).toBeGreaterThan(resumed.fencingToken);
        await next.release();
      });
    }

    it('a resumed hold is handed on again: its own token resumes once more', async () => {
      const [a, b, c] = [provider(), provider(), provider()];
      const name = `hand-over-again-${count}`;
      const held = await a.createLock(name).acquire({ timeout: scaled(2000) });
      const first = held.export();
      const resumed = await b.createLock(name).resume(first);
      const second = resumed.export();
      const again = await c.createLock(name).resume(second);
      expect(again.fencingToken).toBe(held.fencingToken);
      await expect(a.createLock(name).resume(first)).rejects.toSatisfy(LockLostError.isInstance);
      await expect(a.createLock(name).resume(second)).rejects.toSatisfy(LockLostError.isInstance);
      const [state] = (await a.createLock(name).inspect()).holders;
      expect(state?.fencingToken).toBe(held.fencingToken);
      expect(await again.release()).toBe(true);
    });
  });
}

describe('hand-over on Redlock, 3 nodes: faults', () => {
  function provider(): RedisLockProvider {
    const nodes = servers.map((server) => server.url);
    const created = createRedisLockProvider({ leaseMs: 3000, commandTimeoutMs: 200, nodes });
    providers.push(created);
    return created;
  }

  it('a resume that reached no quorum is undone: the token resumes later, once', async () => {
    const [a, b, c] = [provider(), provider(), provider()];
    const name = 'hand-over-no-quorum';
    const held = await a.createLock(name).acquire({ timeout: scaled(2000) });
    const token = held.export();
    // b is connected to every node, so its resume reaches the paused ones and runs there late.
    expect(await (await b.createLock(`${name}-warm`).acquire()).release()).toBe(true);
    await servers[1]!.pause();
    await servers[2]!.pause();
    try {
      await expect(b.createLock(name).resume(token)).rejects.toThrow(/no majority/);
    } finally {
      await servers[1]!.resume();
      await servers[2]!.resume();
    }
    // The paused nodes ran the late resume, then its undo; node 0 moved it back.
    const resumed = await c.createLock(name).resume(token);
    expect(resumed.fencingToken).toBe(held.fencingToken);
    await expect(b.createLock(name).resume(token)).rejects.toSatisfy(LockLostError.isInstance);
    expect(await resumed.extend()).toBe(true);
    expect(await resumed.release()).toBe(true);
  });

  it('with one node paused the first resume wins on the others; the second is refused', async () => {
    const [a, b, c] = [provider(), provider(), provider()];
    const name = 'hand-over-paused';
    const held = await a.createLock(name).acquire({ timeout: scaled(2000) });
    const token = held.export();
    await servers[0]!.pause();
    try {
      const resumed = await b.createLock(name).resume(token);
      await expect(c.createLock(name).resume(token)).rejects.toSatisfy(LockLostError.isInstance);
      expect(await resumed.extend()).toBe(true);
      expect(await resumed.release()).toBe(true);
    } finally {
      await servers[0]!.resume();
    }
  });
});
