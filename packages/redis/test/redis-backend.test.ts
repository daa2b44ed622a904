import { connect } from 'node:net';
import { InvalidArgumentError, LockLostError } from '@lockkit/core';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  createRedisLockProvider,
  type RedisLockProvider,
  type RedisLockProviderOptions,
  redisLockKeys,
} from '../src/index.js';
import { semaphoreQuorumOf } from '../src/redlock-quorum.js';
import { acquireMutex } from '../src/scripts/acquire-scripts.js';
import { inspectHolds } from '../src/scripts/inspect-scripts.js';
import { releaseString } from '../src/scripts/release-scripts.js';
import { eventually, scaled, testLeaseMs } from './support.js';

const urls = inject('lockkitServers').redisUrls;
const url = urls[0]!;
const opened: { close(): Promise<void> | void }[] = [];

afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
});

function provider(options: RedisLockProviderOptions = {}): RedisLockProvider {
  const created = createRedisLockProvider({
    nodes: url,
    leaseMs: testLeaseMs,
    commandTimeoutMs: 250,
    ...options,
  });
  opened.push(created);
  return created;
}

function client(options: { keyPrefix?: string } = {}): Redis {
  const created = new Redis(url, options);
  opened.push({ close: () => void created.disconnect() });
  return created;
}

const keysOf = (name: string) => redisLockKeys('', 'mutex', name);
const unique = (label: string): string => `${label}:${Math.random().toString(36).slice(2)}`;

describe('options', () => {
  it('rejects bad options at construction with InvalidArgumentError, before any I/O', () => {
    const bad: unknown[] = [
      { nodes: [] },
      { nodes: 'http://localhost' },
      { nodes: 'not a url' },
      { nodes: [42] },
      { nodes: ['redis://a:1', 'redis://a:1'] },
      { leaseMs: 99 },
      { leaseMs: 1000.5 },
      { leaseMs: Number.NaN },
      { leaseMs: 1000, commandTimeoutMs: 400 },
      { commandTimeoutMs: 0 },
      { pollIntervalMs: -1 },
      { autoExtend: 'yes' },
      { namespace: 7 },
      { timeoutMs: 5 },
    ];
    for (const options of bad) {
      expect(() => createRedisLockProvider(options as RedisLockProviderOptions)).toThrow(
        InvalidArgumentError,
      );
    }
    // Core's option checks, so the same mistake reads the same on every backend.
    expect(() => createRedisLockProvider({ leaseMs: 99 })).toThrow(
      'leaseMs must be an integer from 100 to 2147483647, got 99',
    );
    expect(() => createRedisLockProvider({ timeoutMs: 5 } as RedisLockProviderOptions)).toThrow(
      /^Unknown Redis lock provider option "timeoutMs" \(known options: namespace, nodes,/,
    );
  });

  it('derives defaults from the lease and declares honest capabilities', () => {
    const created = createRedisLockProvider({ nodes: 'redis://127.0.0.1:1' });
    opened.push(created);
    expect(created.leaseMs).toBe(30_000);
    expect(created.capabilities).toMatchObject({ crossProcess: true, leases: true, fifo: false });
    expect(created.capabilities.lostDetectionMs).toBeGreaterThanOrEqual(30_000);
    expect(created.capabilities.abandonedReleaseMs).toBeGreaterThanOrEqual(30_000);
  });

  it('needs floor(N·k/(k+1))+1 nodes for a Redlock semaphore of k permits', () => {
    expect(semaphoreQuorumOf(1, 5)).toBe(1);
    expect(semaphoreQuorumOf(3, 1)).toBe(2);
    expect(semaphoreQuorumOf(5, 1)).toBe(3);
    expect(semaphoreQuorumOf(5, 2)).toBe(4);
    expect(semaphoreQuorumOf(5, 4)).toBe(5);
    expect(semaphoreQuorumOf(3, 3)).toBe(3);
  });
});

describe('clients', () => {
  it('runs on the ioredis major under test (LOCKKIT_IOREDIS=6: the ioredis6 alias, RESP3)', async () => {
    const created = provider();
    const handle = await created.createLock(unique('major')).tryAcquire();
    await handle?.release();
    const options = created.clients[0]!.options as { protocol?: number };
    expect(options.protocol).toBe(process.env['LOCKKIT_IOREDIS'] === '6' ? 3 : undefined);
  });

  it('never closes an injected client, and works through its keyPrefix (keys and channels)', async () => {
    const prefixed = client({ keyPrefix: 'tenant-a:' });
    const waiterClient = client({ keyPrefix: 'tenant-a:' });
    const [p1, p2] = [
      provider({ nodes: prefixed, pollIntervalMs: 60_000 }),
      provider({
        nodes: waiterClient,
        pollIntervalMs: 60_000,
        autoExtend: false,
        leaseMs: 60_000,
        commandTimeoutMs: 1000,
      }),
    ];
    const name = unique('prefixed');
    const holder = await p1.createLock(name).acquire();
    const { lock } = keysOf(name);
    const raw = client();
    expect(await raw.exists(`tenant-a:${lock}`)).toBe(1);
    expect(await raw.exists(lock)).toBe(0);
    // The waiter's safety poll is a minute away: only the (prefixed) channel can wake it.
    const waiting = p2.createLock(name).acquire({ timeout: 10_000 });
    // Registered in the lock's waiters set: the waiter has subscribed, retried and now waits.
    await eventually(async () => (await raw.zcard(`tenant-a:${keysOf(name).waiters}`)) === 1, 2000);
    await eventually(async () => {
      const reply = (await raw.pubsub('NUMSUB', `tenant-a:${keysOf(name).channel}`)) as unknown[];
      return Number(reply[1]) === 1;
    }, 2000);
    const releasedAt = performance.now();
    await holder.release();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(scaled(100));
    await next.release();
    await p1.close();
    await p2.close();
    expect(prefixed.status).toBe('ready');
    expect(await prefixed.ping()).toBe('PONG');
  });

  it("sends a release's wake-up to the waiting provider's own channel; an older provider's to the lock's", async () => {
    const raw = client();
    const listener = client();
    const name = unique('own-channel');
    const { channel, waiters } = keysOf(name);
    const heard: string[] = [];
    listener.on('message', (from: string, message: string) => heard.push(`${from} ${message}`));
    await listener.subscribe(channel);
    const [holder, waiter] = [provider(), provider({ pollIntervalMs: 60_000, leaseMs: 60_000 })];
    const held = await holder.createLock(name).acquire();
    const waiting = waiter.createLock(name).acquire({ timeout: 10_000 });
    await eventually(async () => (await raw.zcard(waiters)) === 1, 2000);
    const [id] = await raw.zrange(waiters, 0, 0);
    expect(id).toMatch(/^~/);
    await eventually(
      async () => (await subscriberCounts(raw, [`${channel}:${id}`]))[0] === 1,
      2000,
    );
    const releasedAt = performance.now();
    await held.release();
    await (await waiting).release();
    // Woken by the message (its poll is a minute away), which the lock's channel never saw.
    expect(performance.now() - releasedAt).toBeLessThan(scaled(100));
    // A waiter registered by an older provider (an id without '~') is woken on the lock's
    // channel, by name; this listener's connection also delivers in order, so an earlier
    // message on the lock's channel would come first.
    const again = await holder.createLock(name).acquire();
    await raw.zadd(waiters, Date.now() + 60_000, 'older-provider');
    await again.release();
    await eventually(async () => heard.length > 0, 2000);
    expect(heard).toEqual([`${channel} older-provider`]);
    await raw.zrem(waiters, 'older-provider');
  });

  it('shares one subscriber connection per provider across all waiting names', async () => {
    const raw = client();
    const [holder, waiter] = [provider(), provider()];
    const names = Array.from({ length: 9 }, (_, index) => unique(`sub-${index}`));
    const channels = names.map((name) => keysOf(name).channel);
    const held = await Promise.all(names.map((name) => holder.createLock(name).acquire()));
    const waits = names.map((name) => waiter.createLock(name).acquire({ timeout: 5000 }));
    for (const name of names) {
      await eventually(async () => (await raw.zcard(keysOf(name).waiters)) === 1, 2000);
    }
    // Each channel has one subscriber, and one connection carries all nine, each with the
    // provider's own channel for that lock (18 subscriptions). The subscriber connection may
    // still be opening when the waiters are queued (a slow machine): wait for its SUBSCRIBEs.
    await eventually(
      async () => (await subscriberCounts(raw, channels)).every((count) => count > 0),
      2000,
    );
    expect(await subscriberCounts(raw, channels)).toEqual(channels.map(() => 1));
    const list = (await raw.client('LIST')) as string;
    expect(list.split('\n').filter((line) => /\bsub=18\b/.test(line))).toHaveLength(1);
    for (const handle of held) await handle.release();
    for (const handle of await Promise.all(waits)) await handle.release();
    // Subscriptions linger for a poll interval after the last waiter, then go.
    await eventually(async () => {
      const counts = await subscriberCounts(raw, channels);
      return counts.every((count) => count === 0);
    }, 3000);
  });

  it('a SUBSCRIBE that failed is sent again by the next waiter, not taken for a subscription', async () => {
    const admin = client();
    const user = unique('subscriber').replace(':', '-');
    await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all', '-subscribe');
    opened.push({ close: () => void admin.call('ACL', 'DELUSER', user) });
    const limited = new URL(url);
    limited.username = user;
    limited.password = 'pw';
    // The holder's lease is long and the waiter's poll is a minute: between them, only a
    // release message can wake a waiter within its timeout.
    const holder = provider({ leaseMs: 30_000, commandTimeoutMs: 250 });
    const waiters = provider({ nodes: limited.href, pollIntervalMs: 60_000 });
    const name = unique('resubscribe');
    const { waiters: registry, channel } = keysOf(name);
    const held = await holder.createLock(name).acquire();
    // A first waiter's SUBSCRIBE is refused (NOPERM); it waits on its poll, then gives up.
    const first = new AbortController();
    const gaveUp = waiters
      .createLock(name)
      .acquire({ signal: first.signal })
      .catch((e: unknown) => e);
    await eventually(async () => (await admin.zcard(registry)) === 1, 2000);
    first.abort(new Error('gave up'));
    expect(await gaveUp).toMatchObject({ message: 'gave up' });
    await admin.call('ACL', 'SETUSER', user, '+subscribe');
    // The next waiter on the same (still lingering) channel subscribes again.
    const waiting = waiters.createLock(name).acquire({ timeout: 5000 });
    await eventually(async () => {
      const reply = (await admin.pubsub('NUMSUB', channel)) as (string | number)[];
      return Number(reply[1]) === 1;
    }, 2000);
    await held.release();
    const next = await waiting;
    expect(await next.release()).toBe(true);
  });

  it('reloads its scripts after SCRIPT FLUSH (NOSCRIPT fallback)', async () => {
    const raw = client();
    const p1 = provider();
    const name = unique('flush');
    (await p1.createLock(name).acquire()).release();
    await raw.script('FLUSH');
    const handle = await p1.createLock(name).acquire({ timeout: 1000 });
    expect(await handle.release()).toBe(true);
  });
});

async function subscriberCounts(raw: Redis, channels: readonly string[]): Promise<number[]> {
  const reply = (await raw.pubsub('NUMSUB', ...channels)) as (string | number)[];
  return reply.filter((_, index) => index % 2 === 1).map(Number);
}

describe('server-side state and fencing', () => {
  it('leaves only the fencing counter behind after every kind is released', async () => {
    const raw = client();
    const p1 = provider();
    const name = unique('state');
    const handles = [
      await p1.createLock(name).acquire(),
      await p1.createReadWriteLock(name).acquireRead(),
      await p1.createSemaphore(name, 3).acquire(),
    ];
    for (const handle of handles) expect(await handle.release()).toBe(true);
    const rw = p1.createReadWriteLock(name);
    expect(await (await rw.acquireWrite()).release()).toBe(true);
    const left = [];
    for (const kind of ['mutex', 'read', 'semaphore'] as const) {
      const keys = redisLockKeys('', kind, name);
      left.push(...(await raw.keys(`${keys.lock.replace(/[{}]/g, '\\$&')}*`)));
    }
    expect(left.sort()).toEqual(
      (['mutex', 'read', 'semaphore'] as const)
        .map((kind) => redisLockKeys('', kind, name).fence)
        .sort(),
    );
  });

  it('keeps fencing tokens exact beyond 2^53', async () => {
    const raw = client();
    const name = unique('big-token');
    await raw.set(redisLockKeys('', 'mutex', name).fence, '9007199254740993');
    const handle = await provider().createLock(name).acquire();
    expect(handle.fencingToken).toBe(9007199254740994n);
    await handle.release();
  });

  it('fencing tokens stay exact where the reply switches from an integer to a string (10^14)', async () => {
    const raw = client();
    const name = unique('token-switch');
    await raw.set(redisLockKeys('', 'mutex', name).fence, '99999999999998');
    const lock = provider().createLock(name);
    const tokens: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const handle = await lock.acquire();
      tokens.push(handle.fencingToken);
      await handle.release();
    }
    expect(tokens).toEqual([99999999999999n, 100000000000000n, 100000000000001n]);
  });

  it("Redlock: the token passes the quorum's largest counter, and release raises every node to it", async () => {
    const raws = urls.slice(0, 3).map((nodeUrl) => {
      const created = new Redis(nodeUrl);
      opened.push({ close: () => void created.disconnect() });
      return created;
    });
    const name = unique('converge');
    const { fence } = redisLockKeys('', 'mutex', name);
    // Node 0 lags behind: every majority still includes a node at 100.
    await raws[1]!.set(fence, '100');
    await raws[2]!.set(fence, '100');
    const redlock = provider({ nodes: urls.slice(0, 3) });
    const handle = await redlock.createLock(name).acquire();
    // 101 when nodes 1 and 2 answer first (they agree); 102 after a redraw when node 0's 1 is
    // among the first two answers (the counters disagree, so all are lifted and draw again).
    expect([101n, 102n]).toContain(handle.fencingToken);
    await handle.release();
    for (const raw of raws) {
      await eventually(
        async () => BigInt((await raw.get(fence)) ?? '0') >= handle.fencingToken,
        1000,
      );
    }
    const next = await redlock.createLock(name).acquire();
    expect(next.fencingToken).toBe(handle.fencingToken + 1n); // every node agrees now
    await next.release();
  });
});

describe('leases and waiting', () => {
  it('autoExtend: false holds for one lease, then the signal aborts and the lock is free', async () => {
    const p1 = provider({ autoExtend: false });
    const p2 = provider({ pollIntervalMs: 60_000 });
    const name = unique('fixed-lease');
    const handle = await p1.createLock(name).acquire();
    const acquiredAt = performance.now();
    // No release is published: the waiter is woken by the blocking lease's expiry hint.
    const next = await p2.createLock(name).acquire({ timeout: 5000 });
    const waitedMs = performance.now() - acquiredAt;
    expect(waitedMs).toBeGreaterThanOrEqual(testLeaseMs - 50);
    expect(waitedMs).toBeLessThan(testLeaseMs + scaled(250));
    await eventually(() => handle.signal.aborted, 500);
    expect(LockLostError.isInstance(handle.signal.reason)).toBe(true);
    expect(await handle.release()).toBe(false);
    expect(await next.release()).toBe(true);
  });

  it('a writer that gives up withdraws its marker, so readers are not held back', async () => {
    const [p1, p2, p3] = [provider(), provider(), provider()];
    const name = unique('withdraw');
    const reader = await p1.createReadWriteLock(name).acquireRead();
    const controller = new AbortController();
    const writer = p2.createReadWriteLock(name).acquireWrite({ signal: controller.signal });
    await eventually(async () => {
      const probe = await p3.createReadWriteLock(name).tryAcquireRead();
      await probe?.release();
      return probe === null;
    }, 2000);
    controller.abort(new Error('gave up'));
    await expect(writer).rejects.toThrow('gave up');
    const startedAt = performance.now();
    const late = await p3.createReadWriteLock(name).acquireRead({ timeout: 2000 });
    expect(performance.now() - startedAt).toBeLessThan(scaled(200)); // not the marker's expiry
    await late.release();
    await reader.release();
  });

  it('an expired semaphore holder is pruned inside the script', async () => {
    const p1 = provider({ autoExtend: false });
    const p2 = provider();
    const name = unique('prune');
    const first = await p1.createSemaphore(name, 1).acquire();
    expect(await p2.createSemaphore(name, 1).tryAcquire()).toBeNull();
    await eventually(() => first.signal.aborted, testLeaseMs + 500);
    // The client stops vouching (drift allowance) just before the server's expiry.
    const second = await p2.createSemaphore(name, 1).acquire({ timeout: 500 });
    expect(await first.release()).toBe(false);
    expect(await second.release()).toBe(true);
  });

  it('a weighted hold is n members of the holder set, released and extended together', async () => {
    const p1 = provider();
    const name = unique('weighted-members');
    const keys = redisLockKeys('', 'semaphore', name);
    const raw = client();
    const held = await p1.createSemaphore(name, 4).acquire({ permits: 3 });
    const members = await raw.zrange(keys.lock, 0, -1, 'WITHSCORES');
    const tokens = members.filter((_, index) => index % 2 === 0).sort();
    expect(tokens).toHaveLength(3);
    expect(tokens.slice(1).map((token) => token.slice(tokens[0]!.length))).toEqual(['#2', '#3']);
    expect(new Set(members.filter((_, index) => index % 2 === 1)).size).toBe(1); // one expiry
    const before = Number(members[1]);
    expect(await held.extend(testLeaseMs * 3)).toBe(true);
    const scores = await raw.zrange(keys.lock, 0, -1, 'WITHSCORES');
    const extended = scores.filter((_, index) => index % 2 === 1).map(Number);
    expect(extended).toHaveLength(3);
    for (const score of extended) expect(score).toBeGreaterThan(before + testLeaseMs);
    expect(await held.release()).toBe(true);
    expect(await raw.exists(keys.lock)).toBe(0);
  });

  it("a dead waiter's reservation holds later requests back only until it lapses", async () => {
    const p1 = provider({ pollIntervalMs: 50 });
    const name = unique('dead-reservation');
    const keys = redisLockKeys('', 'semaphore', name);
    const raw = client();
    const [seconds, micros] = await raw.time();
    const lapseAt = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + scaled(300);
    // What a weighted waiter that died leaves behind: an old reservation nobody refreshes.
    await raw.zadd(keys.reservations, lapseAt, '000000000000000:dead');
    const semaphore = p1.createSemaphore(name, 4);
    expect(await semaphore.tryAcquire()).toBeNull(); // 4 permits free, yet behind the reservation
    expect(await semaphore.tryAcquire({ permits: 4 })).toBeNull();
    const handle = await semaphore.acquire({ permits: 4, timeout: scaled(5000) });
    const [after, afterMicros] = await raw.time();
    expect(Number(after) * 1000 + Number(afterMicros) / 1000).toBeGreaterThanOrEqual(lapseAt);
    expect(await raw.exists(keys.reservations)).toBe(0); // lapsed, and ours went with the grant
    expect(await handle.release()).toBe(true);
  });
});

/** Sends `HELLO 3` (RESP3), then `command`, then PING, on a raw socket; returns `command`'s raw reply. */
async function resp3Reply(target: string, command: readonly (string | number)[]): Promise<string> {
  const { hostname, port } = new URL(target);
  const encode = (parts: readonly (string | number)[]): string =>
    `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(String(part))}\r\n${part}\r\n`).join('')}`;
  const socket = connect(Number(port), hostname);
  let received = '';
  try {
    socket.write(encode(['HELLO', '3']) + encode(command) + encode(['PING']));
    for await (const chunk of socket) {
      received += String(chunk);
      if (received.endsWith('+PONG\r\n')) break;
    }
  } finally {
    socket.destroy();
  }
  const withoutPing = received.slice(0, -'+PONG\r\n'.length);
  return /(\$\d+\r\n[^\r]*\r\n|:-?\d+\r\n|_\r\n|#[tf]\r\n)$/.exec(withoutPing)?.[0] ?? withoutPing;
}

describe('RESP3', () => {
  it('every script reply is an integer or a bulk string under RESP3 too (same as RESP2)', async () => {
    const name = unique('resp3');
    const keys = keysOf(name);
    const token = 'resp3-token';
    // Both call shapes of each script: with and without its optional trailing keys.
    const { lock, fence, holds, waiters } = keys;
    const acquire = [acquireMutex.lua, 5, lock, fence, keys.cancel(token), holds, waiters];
    // Granted: the fencing token as an integer (a bulk string from 10^14 on: see the 2^53 test).
    const info = '1700000000000:owner ✓';
    expect(await resp3Reply(url, ['EVAL', ...acquire, token, 5000, info, 'p', 0, '0'])).toBe(
      ':1\r\n',
    );
    const shortAcquire = [acquireMutex.lua, 4, lock, fence, keys.cancel('other'), holds];
    const busy = await resp3Reply(url, ['EVAL', ...shortAcquire, 'other', 5000, info]);
    // Busy with a retry hint of h ms: -2 - h, so at most -2 (h <= 5000 here).
    expect(busy).toMatch(/^:-\d+\r\n$/);
    const hint = -2 - Number(busy.slice(1, -2));
    expect(hint).toBeGreaterThanOrEqual(0);
    expect(hint).toBeLessThanOrEqual(5000);
    // inspect: an array (kind, token, ms left, permits, record); its last element, the record, a bulk string.
    const record = `1:${info}`;
    expect(await resp3Reply(url, ['EVAL', inspectHolds.lua, 2, holds, lock, 'mutex'])).toBe(
      `$${Buffer.byteLength(record)}\r\n${record}\r\n`,
    );
    const release = [releaseString.lua, 3, lock, waiters, holds];
    expect(await resp3Reply(url, ['EVAL', ...release, token, keys.channel, '1', 'PUBLISH'])).toBe(
      ':1\r\n',
    );
    const fullRelease = [...release, keys.fence, keys.cancel(token)];
    fullRelease[1] = 5;
    expect(
      await resp3Reply(url, ['EVAL', ...fullRelease, token, keys.channel, '1', 'PUBLISH', 0, '']),
    ).toBe(':0\r\n');
  });
});
