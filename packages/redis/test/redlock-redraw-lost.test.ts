import type { LockHandle } from '@lockkit/core';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { redrawFence } from '../src/scripts/acquire-scripts.js';
import { onRedraw } from './support.js';

// A Redlock grant whose nodes' counters disagree draws its token again (fence-agreement.ts).
// If its lease runs out on the servers between the acquire round and that draw (a server
// clock jumped ahead: chaos, issue 24) and another grant takes the lock, the draw must not
// give the first grant a token above the new holder's. Before the fix it did: the acquire
// returned a handle while another held the lock, with the larger token, so the rightful
// holder's fenced writes were the ones refused, and its release (true) looked like a lie.
//
// Forced without timing: the first redraw our provider sends finds the hold gone (deleted
// on every node, as an expired lease is) and another provider's grant in its place.
let servers: ServerHandle[] = [];
let raw: Redis[] = [];
const clients: Redis[] = [];
let ours: RedisLockProvider;
let theirs: RedisLockProvider;
/** What happens before the first redraw of a case reaches any node (once per case). */
let interleave: (() => Promise<void>) | undefined;
let interleaved: Promise<void> | undefined;

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  raw = servers.map((server) => new Redis(server.url));
  for (const client of raw) await client.script('LOAD', redrawFence.lua);
  for (const server of servers) clients.push(new Redis(server.url));
  for (const client of clients) {
    onRedraw(client, async (run) => {
      interleaved ??= interleave?.();
      await interleaved;
      return run();
    });
  }
  const options = { leaseMs: 20_000, commandTimeoutMs: 5000, autoExtend: false };
  ours = createRedisLockProvider({ ...options, nodes: clients });
  theirs = createRedisLockProvider({ ...options, nodes: servers.map((server) => server.url) });
});

afterAll(async () => {
  await ours?.close();
  await theirs?.close();
  for (const client of [...raw, ...clients]) client.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

const cases = [
  { kind: 'mutex', create: (p: RedisLockProvider, name: string) => p.createLock(name) },
  {
    kind: 'semaphore',
    create: (p: RedisLockProvider, name: string) => p.createSemaphore(name, 1),
  },
] as const;

describe('Redlock: a hold that ran out before its token was drawn again', () => {
  it.each(cases)(
    '$kind: is not granted, and the new holder keeps the larger token',
    async ({ kind, create }) => {
      const name = `redraw-lost-${kind}`;
      const keys = redisLockKeys('', kind, name);
      // Counters that no two nodes share: our acquire round disagrees, so it redraws.
      await Promise.all(
        raw.map((client, index) => client.set(keys.fence, String(10 * (index + 1)))),
      );
      // Set by `interleave` (a closure: declared wide, or TypeScript narrows it to null).
      let their = null as LockHandle | null;
      interleave = async () => {
        await Promise.all(raw.map((client) => client.del(keys.lock)));
        their = await create(theirs, name).tryAcquire();
      };
      try {
        const mine = await create(ours, name).tryAcquire();
        const theirToken = their?.fencingToken;
        expect(theirToken).toBeDefined();
        // Before the fix: a handle, with a token above theirs.
        expect(mine?.fencingToken).toBeUndefined();
        expect(await their?.release()).toBe(true);
        // Nothing of ours was left behind: the next grant is immediate, above theirs.
        const next = await create(ours, name).tryAcquire();
        expect(next?.fencingToken).toBeGreaterThan(theirToken ?? 0n);
        expect(await next?.release()).toBe(true);
      } finally {
        interleave = undefined;
        interleaved = undefined;
      }
    },
  );
});
