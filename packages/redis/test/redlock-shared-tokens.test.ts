import type { LockHandle } from '@lockkit/core';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { eventually } from './support.js';

// Contract guarantee 8: fencing tokens are unique and increasing per name, across holders. Two
// SHARED grants (readers, semaphore permits) may overlap, and if node 0 counts A then B while
// node 1 counts B then A, both see the same largest counter. These tests force that order:
// node 1 is paused while A and then B reach node 0; B's provider already has a command
// waiting on node 1 (written before A's), so once node 1 runs again it serves B's connection
// first (the kernel reports readable sockets in the order they became readable).
let servers: ServerHandle[] = [];
let raw: Redis[] = [];
const providers: RedisLockProvider[] = [];

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  raw = servers.map((server) => new Redis(server.url));
});

afterAll(async () => {
  for (const client of raw) client.disconnect();
  await Promise.all(providers.map((provider) => provider.close()));
  await Promise.all(servers.map((server) => server.resume().catch(() => {})));
  await Promise.all(servers.map((server) => server.stop()));
});

function provider(): RedisLockProvider {
  const created = createRedisLockProvider({
    nodes: servers.map((server) => server.url),
    leaseMs: 20_000,
    commandTimeoutMs: 5000,
    autoExtend: false,
  });
  providers.push(created);
  return created;
}

/** Loads every script on every node through both providers, so no NOSCRIPT round reorders. */
async function warm(target: RedisLockProvider): Promise<void> {
  for (const handle of [
    await target.createLock('warm-up').acquire(),
    await target.createReadWriteLock('warm-up').acquireRead(),
    await target.createSemaphore('warm-up', 5).acquire(),
  ]) {
    await handle.release();
  }
}

/**
 * Runs two shared grants so that node 0 counts A before B and node 1 counts B before A.
 * `holders` is the key whose size on node 0 tells that an attempt got there.
 */
async function crossed(
  acquire: (target: RedisLockProvider) => Promise<LockHandle>,
  holders: string,
): Promise<[LockHandle, LockHandle]> {
  const [p1, p2] = [provider(), provider()];
  await warm(p1);
  await warm(p2);
  await servers[1]!.pause();
  let a: Promise<LockHandle>;
  let b: Promise<LockHandle>;
  try {
    // B's provider writes to node 1 first (a mutex nodes 0 and 2 decide).
    const primer = await p2.createLock('primer').acquire();
    a = acquire(p1);
    await eventually(async () => (await raw[0]!.zcard(holders)) === 1, 5000);
    b = acquire(p2);
    await eventually(async () => (await raw[0]!.zcard(holders)) === 2, 5000);
    void primer.release().catch(() => {});
  } finally {
    await servers[1]!.resume();
  }
  return [await a, await b];
}

describe('Redlock fencing tokens of shared grants', () => {
  it('two concurrent readers counted in opposite orders get different tokens', async () => {
    const name = 'crossed-readers';
    const keys = redisLockKeys('', 'read', name);
    // Node 2 refuses readers (a writer holds it there), so both need nodes 0 and 1.
    await raw[2]!.set(keys.lock, 'someone-else', 'PX', 60_000);
    for (const client of raw.slice(0, 2)) await client.set(keys.fence, '10');
    const [a, b] = await crossed((p) => p.createReadWriteLock(name).acquireRead(), keys.readers);
    expect(a.fencingToken).toBeGreaterThan(10n);
    expect(b.fencingToken).toBeGreaterThan(10n);
    expect(a.fencingToken).not.toBe(b.fencingToken);
    await Promise.all([a.release(), b.release()]);
    await raw[2]!.del(keys.lock);
  });

  it('two concurrent semaphore permits counted in opposite orders get different tokens', async () => {
    const name = 'crossed-permits';
    const keys = redisLockKeys('', 'semaphore', name);
    // maxCount 5 on 3 nodes: a permit needs every node.
    for (const client of raw) await client.set(keys.fence, '10');
    const [a, b] = await crossed((p) => p.createSemaphore(name, 5).acquire(), keys.lock);
    expect(a.fencingToken).toBeGreaterThan(10n);
    expect(b.fencingToken).toBeGreaterThan(10n);
    expect(a.fencingToken).not.toBe(b.fencingToken);
    // Every later grant still counts past both.
    const later = await providers[0]!.createSemaphore(name, 5).acquire();
    expect(later.fencingToken).toBeGreaterThan(a.fencingToken);
    expect(later.fencingToken).toBeGreaterThan(b.fencingToken);
    await Promise.all([a.release(), b.release(), later.release()]);
  });
});
