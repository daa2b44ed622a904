import { BackendUnavailableError } from '@lockkit/core';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { redrawFence } from '../src/scripts/acquire-scripts.js';
import { onRedraw } from './support.js';

// A Redlock grant whose nodes returned different fencing counters redraws until a quorum
// returns one value (fence-agreement.ts). A node that did NOT grant can have its counter
// moved by other grants between two redraws (shared grants there, or attempts that reached
// only a minority). Such a node must not keep the holders from agreeing: before the fix its
// larger value became the token to agree on, every redraw round, so an exclusive grant the
// nodes had given failed with "did not agree after 4 redraws", was undone, and retried only
// after the poll interval (chaos: a waiting writer lost its marker on the nodes that granted
// it, and readers got in ahead of it, issue 24).
//
// The interleaving is forced, without timing: node 2 (which refused the writer) counts a
// competing draw just before each of our redraws reaches it, and node 1 (which granted)
// runs each redraw only after node 2 answered it, so every round is decided with node 2's
// larger value in hand.
let servers: ServerHandle[] = [];
let raw: Redis[] = [];
const clients: Redis[] = [];
let provider: RedisLockProvider;

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve = (): void => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  raw = servers.map((server) => new Redis(server.url));
  // Loaded up front, so redraws go through EVALSHA (a NOSCRIPT round would bypass onRedraw).
  for (const client of raw) await client.script('LOAD', redrawFence.lua);
  for (const server of servers) clients.push(new Redis(server.url));
  const answered: Deferred[] = [];
  const answer = (round: number): Deferred => {
    answered[round] ??= deferred();
    return answered[round] as Deferred;
  };
  let contenderRound = 0;
  let slowRound = 0;
  onRedraw(clients[2]!, async (run, fenceKey) => {
    const round = contenderRound++;
    await clients[2]!.incrby(fenceKey, 1000); // another grant's draw lands first
    const reply = await run();
    answer(round).resolve();
    return reply;
  });
  onRedraw(clients[1]!, async (run) => {
    await answer(slowRound++).promise;
    return run();
  });
  provider = createRedisLockProvider({
    nodes: clients,
    leaseMs: 20_000,
    commandTimeoutMs: 5000,
    autoExtend: false,
  });
});

afterAll(async () => {
  await provider?.close();
  for (const client of [...raw, ...clients]) client.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

describe('Redlock fencing-token agreement', () => {
  it('an exclusive grant agrees in one redraw while a node that did not grant keeps counting', async () => {
    const name = 'agree-writer';
    const keys = redisLockKeys('', 'write', name);
    // Node 2 refuses the writer (a reader holds it there); nodes 0 and 1 grant it, with
    // counters that disagree (11 and 21).
    await raw[2]!.zadd(keys.readers, 9e15, 'a-reader');
    await raw[0]!.set(keys.fence, '10');
    await raw[1]!.set(keys.fence, '20');
    const lock = provider.createReadWriteLock(name);
    let handle: Awaited<ReturnType<typeof lock.acquireWrite>>;
    try {
      handle = await lock.acquireWrite({ timeout: 0 });
    } catch (error) {
      // Before the fix: BackendUnavailableError "did not agree after 4 redraws".
      expect.fail(
        `the grant was not settled: ${error instanceof BackendUnavailableError ? error.message : String(error)}`,
      );
    }
    // Nodes 0 and 1 were lifted to 21 and drew 22 together; node 2 drew 1001.
    expect(handle.fencingToken).toBe(22n);
    await handle.release();
    await raw[2]!.del(keys.readers);
    // Tokens never go backwards: the next grant counts past it.
    const next = await lock.acquireWrite({ timeout: 0 });
    expect(next.fencingToken).toBeGreaterThan(22n);
    await next.release();
  });
});
