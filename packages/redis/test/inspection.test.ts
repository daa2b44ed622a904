import diagnostics from 'node:diagnostics_channel';
import { abortedWithin } from '@lockkit/conformance';
import { channelNames, type LockEvent, LockLostError } from '@lockkit/core';
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
import { scaled, testLeaseMs } from './support.js';

// Own servers: one of them is paused below, which must not disturb other files.
let servers: ServerHandle[] = [];
let raw: Redis[] = [];
const providers: RedisLockProvider[] = [];
const commandTimeoutMs = 200;

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  raw = servers.map((server) => new Redis(server.url));
});

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  for (const client of raw) client.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

function provider(options: Partial<RedisLockProviderOptions> = {}): RedisLockProvider {
  const nodes = servers.map((server) => server.url);
  const created = createRedisLockProvider({
    leaseMs: testLeaseMs,
    commandTimeoutMs,
    ...options,
    nodes: options.nodes ?? nodes,
  });
  providers.push(created);
  return created;
}

/** Resolves when an acquire of `name` starts waiting (subscribed, refused again). */
function nextWait(name: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      if ((message as LockEvent).name !== name) return;
      diagnostics.unsubscribe(channelNames.wait, listener);
      resolve();
    };
    diagnostics.subscribe(channelNames.wait, listener);
  });
}

/** Resolves after the next confirmed lease extension of a hold of `name`. */
function nextExtension(name: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      const event = message as LockEvent;
      if (event.name !== name || !event.ok) return;
      diagnostics.unsubscribe(channelNames.extend, listener);
      resolve();
    };
    diagnostics.subscribe(channelNames.extend, listener);
  });
}

describe('Redlock inspect() and forceRelease()', () => {
  it('report a hold once, from a majority, with a paused node; the break is seen in the declared bound', async () => {
    const name = 'inspect-paused';
    const holder = provider({ owner: 'ops Ünïcode: a:b' });
    const operator = provider();
    const handle = await holder.createLock(name).acquire({ timeout: 2000 });
    await servers[0]!.pause();
    try {
      const state = await operator.createLock(name).inspect();
      expect(state.holders).toHaveLength(1);
      expect(state.waiting).toBeUndefined();
      const [hold] = state.holders;
      expect(hold?.fencingToken).toBe(handle.fencingToken);
      expect(hold?.owner).toBe('ops Ünïcode: a:b');
      expect(hold?.validUntil).toBeLessThanOrEqual(Date.now() + testLeaseMs);
      expect(await operator.createLock(name).forceRelease()).toBe(1);
      const bound = scaled(holder.capabilities.lostDetectionMs + 500);
      expect(LockLostError.isInstance(await abortedWithin(handle.signal, bound))).toBe(true);
      expect(await handle.release()).toBe(false);
    } finally {
      await servers[0]!.resume();
    }
    const next = await operator.createLock(name).acquire({ timeout: scaled(2000) });
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    await next.release();
  });

  it('the remains of an attempt on one node only are not a hold', async () => {
    const name = 'inspect-minority';
    const keys = redisLockKeys('', 'mutex', name);
    await raw[1]!.set(keys.lock, 'stray-token', 'PX', 5000);
    await raw[1]!.hset(keys.holds, 'stray-token', `7:${Date.now()}:someone`);
    const lock = provider().createLock(name);
    expect((await lock.inspect()).holders).toEqual([]);
    expect(await lock.forceRelease()).toBe(0);
    expect(await raw[1]!.exists(keys.lock, keys.holds)).toBe(0);
  });

  it('a hold without an inspection record (an older client) is reported without owner, since or token', async () => {
    const name = 'inspect-no-record';
    const keys = redisLockKeys('', 'semaphore', name);
    const handle = await provider().createSemaphore(name, 2).acquire({ timeout: 2000 });
    for (const client of raw) await client.del(keys.holds);
    const state = await provider().createSemaphore(name, 2).inspect();
    expect(state.holders).toHaveLength(1);
    expect(state.holders[0]).toMatchObject({
      kind: 'semaphore',
      fencingToken: undefined,
      owner: undefined,
      since: undefined,
      permits: 1,
    });
    expect(state.holders[0]?.validUntil).toBeGreaterThan(Date.now());
    expect(state.permitsFree).toBe(1);
    expect(await handle.release()).toBe(true);
  });

  it('recordHolds: false writes no record: holds are reported without owner, since or token, and can be broken', async () => {
    const unrecorded = provider({ recordHolds: false, owner: 'quiet' });
    const mutex = unrecorded.createLock('no-record-m');
    const semaphore = unrecorded.createSemaphore('no-record-s', 2);
    const rw = unrecorded.createReadWriteLock('no-record-r');
    const rw2 = unrecorded.createReadWriteLock('no-record-w');
    const cases = [
      {
        kind: 'mutex',
        name: 'no-record-m',
        lock: mutex,
        acquire: () => mutex.acquire({ timeout: 2000 }),
      },
      {
        kind: 'semaphore',
        name: 'no-record-s',
        lock: semaphore,
        acquire: () => semaphore.acquire({ timeout: 2000 }),
      },
      {
        kind: 'read',
        name: 'no-record-r',
        lock: rw,
        acquire: () => rw.acquireRead({ timeout: 2000 }),
      },
      {
        kind: 'write',
        name: 'no-record-w',
        lock: rw2,
        acquire: () => rw2.acquireWrite({ timeout: 2000 }),
      },
    ] as const;
    for (const { kind, name, lock, acquire } of cases) {
      const keys = redisLockKeys('', kind, name);
      const handle = await acquire();
      for (const client of raw) expect(await client.exists(keys.holds), kind).toBe(0);
      const state = await lock.inspect();
      expect(state.holders, kind).toHaveLength(1);
      expect(state.holders[0], kind).toMatchObject({
        kind,
        fencingToken: undefined,
        owner: undefined,
        since: undefined,
      });
      expect(await lock.forceRelease(), kind).toBe(1);
      expect(await handle.release(), kind).toBe(false);
    }
  });

  it('a fencing token the nodes redrew is the one inspect reports', async () => {
    const name = 'inspect-redraw';
    const keys = redisLockKeys('', 'write', name);
    // The three counters stand apart: any two nodes' draws disagree, so the grant redraws.
    await raw[0]!.set(keys.fence, '1000');
    await raw[1]!.set(keys.fence, '2000');
    const handle = await provider().createReadWriteLock(name).acquireWrite({ timeout: 2000 });
    expect(handle.fencingToken).toBeGreaterThan(1000n);
    const state = await provider().createReadWriteLock(name).inspect();
    expect(state.holders.map((hold) => [hold.kind, hold.fencingToken])).toEqual([
      ['write', handle.fencingToken],
    ]);
    expect(await handle.release()).toBe(true);
  });

  it('an extension sets every record to the agreed fencing token', async () => {
    const name = 'inspect-extend';
    const keys = redisLockKeys('', 'mutex', name);
    const handle = await provider({ leaseMs: scaled(3000) })
      .createLock(name)
      .acquire({ timeout: 2000 });
    const { token } = grantBehind<RedisGrant>(handle).grant;
    // Right after an extension, so the next one (a third of the lease away) cannot come
    // between the records' change and the first inspect().
    await nextExtension(name);
    // Two of three records disagree with the handle (as if their nodes had drawn elsewhere).
    for (const client of raw.slice(0, 2)) await client.hset(keys.holds, token, `999:1:x`);
    const lock = provider().createLock(name);
    expect((await lock.inspect()).holders[0]?.fencingToken).toBe(999n);
    await nextExtension(name);
    expect((await lock.inspect()).holders[0]?.fencingToken).toBe(handle.fencingToken);
    await handle.release();
  });

  it('the inspection records last as long as the holds, and go with their release', async () => {
    const name = 'inspect-records';
    const keys = redisLockKeys('', 'read', name);
    const rw = provider({ autoExtend: false }).createReadWriteLock(name);
    const [a, b] = [await rw.acquireRead(), await rw.acquireRead()];
    const tokens = [a, b].map((handle) => grantBehind<RedisGrant>(handle).grant.token).sort();
    for (const client of raw) {
      expect((await client.hkeys(keys.holds)).sort()).toEqual(tokens);
      const ttl = await client.pttl(keys.holds);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(testLeaseMs);
    }
    await a.release();
    await b.release();
    for (const client of raw) expect(await client.exists(keys.holds)).toBe(0);
  });

  it('forceRelease wakes a waiter at once (it does not wait for its poll or the lease)', async () => {
    const name = 'inspect-wake';
    const holder = provider({ leaseMs: 60_000 });
    const handle = await holder.createLock(name).acquire({ timeout: 2000 });
    const waiting = provider({ leaseMs: 60_000, pollIntervalMs: 60_000 });
    const queued = nextWait(name);
    const granted = waiting.createLock(name).acquire({ timeout: scaled(5000) });
    await queued; // published once the waiter is subscribed to the release channel
    expect(await provider().createLock(name).forceRelease()).toBe(1);
    const next = await granted;
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    expect(await handle.release()).toBe(false);
    await next.release();
  });

  it('a weighted hold is reported once with its permits; its break wakes every waiter of a provider', async () => {
    // On the three nodes (a permit of maxCount 3 needs all of them): the two waiters are granted
    // at once and may redraw their tokens together; a redraw that failed would fall back to the
    // (here one-minute) poll (see redlock-shared-redraw.test.ts).
    const name = 'inspect-weighted-wake';
    const holder = provider({ leaseMs: 60_000, owner: 'weighted' });
    const three = await holder.createSemaphore(name, 3).acquire({ permits: 3, timeout: 2000 });
    const operator = provider().createSemaphore(name, 3);
    const state = await operator.inspect();
    expect(state.holders.map((h) => [h.permits, h.fencingToken, h.owner])).toEqual([
      [3, three.fencingToken, 'weighted'],
    ]);
    expect(state.permitsFree).toBe(0);
    // Two waiters of one provider that polls only every minute: a wake-up for one ('*') would
    // leave the second waiting; a semaphore's break wakes all of them ('!').
    const waiting = provider({ leaseMs: 60_000, pollIntervalMs: 60_000 });
    const granted = [];
    for (let i = 0; i < 2; i++) {
      const queued = nextWait(name);
      granted.push(waiting.createSemaphore(name, 3).acquire({ timeout: scaled(5000) }));
      await queued;
    }
    expect(await operator.forceRelease()).toBe(1);
    const next = await Promise.all(granted);
    for (const handle of next) expect(handle.fencingToken).toBeGreaterThan(three.fencingToken);
    expect(await three.release()).toBe(false);
    expect((await operator.inspect()).holders.map((h) => h.permits)).toEqual([1, 1]);
    for (const handle of next) expect(await handle.release()).toBe(true);
  });
});
