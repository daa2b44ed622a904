import diagnostics from 'node:diagnostics_channel';
import {
  BackendUnavailableError,
  channelNames,
  type LockEvent,
  type LockHandle,
  LockLostError,
} from '@lockkit/core';
import { delay } from '@lockkit/core/backend';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { deleteHold, eventually, scaled, testLeaseMs } from './support.js';

// Fault tests start their own servers: pausing or killing them must not disturb other files.
let servers: ServerHandle[] = [];
const providers: RedisLockProvider[] = [];
const commandTimeoutMs = 200;

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
});

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  await Promise.all(servers.map((server) => server.stop()));
});

function provider(
  urls: readonly string[] = servers.map((server) => server.url),
): RedisLockProvider {
  const created = createRedisLockProvider({ nodes: urls, leaseMs: testLeaseMs, commandTimeoutMs });
  providers.push(created);
  return created;
}

/** Connects a provider's clients (acquire + release of a scratch lock) before a fault. */
async function warm(target: RedisLockProvider): Promise<void> {
  const handle = await target.createLock('warm-up').acquire({ timeout: 2000 });
  await handle.release();
}

/** Resolves after `count` successful lease extensions of `handle` (diagnostics_channel). */
function extensions(handle: LockHandle, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const onExtend = (message: unknown): void => {
      const event = message as LockEvent;
      if (event.fencingToken !== handle.fencingToken || event.name !== handle.name || !event.ok) {
        return;
      }
      seen += 1;
      if (seen < count) return;
      diagnostics.unsubscribe(channelNames.extend, onExtend);
      resolve();
    };
    diagnostics.subscribe(channelNames.extend, onExtend);
  });
}

async function rawKeys(url: string, pattern: string): Promise<string[]> {
  const client = new Redis(url);
  try {
    return await client.keys(pattern);
  } finally {
    client.disconnect();
  }
}

describe('Redlock under faults', () => {
  it('a paused (SIGSTOP) minority still grants and releases, promptly', async () => {
    const [p1, p2] = [provider(), provider()];
    const name = 'paused-minority';
    await warm(p1);
    await servers[0]!.pause();
    try {
      const started = performance.now();
      const handle = await p1.createLock(name).acquire({ timeout: 2000 });
      expect(performance.now() - started).toBeLessThan(scaled(commandTimeoutMs)); // majority decides, not the timeout
      expect(await p2.createLock(name).tryAcquire()).toBeNull();
      expect(await handle.release()).toBe(true);
      const next = await p2.createLock(name).tryAcquire();
      expect(next).not.toBeNull();
      await next?.release();
    } finally {
      await servers[0]!.resume();
    }
    // The paused node ran the queued acquire and then the release: nothing is left behind.
    const { lock } = redisLockKeys('', 'mutex', name);
    await eventually(async () => (await rawKeys(servers[0]!.url, lock)).length === 0, 2000);
  });

  it('fencing stays monotonic when a holder vanishes after nodes lost their counters', async () => {
    // Node 0 remembers the counter; nodes 1 and 2 came back empty (a restart without
    // persistence). Holder A is granted by nodes 0 and 1 (node 2 is paused meanwhile, so A's
    // quorum, and so its token, includes node 0's counter whatever order replies come in) and
    // vanishes without ever extending or releasing. Then node 0 hangs, so B's quorum is nodes
    // 1 and 2 alone: B must still get a larger token than A, or a fenced resource would accept
    // A's late writes again.
    const name = 'fence-after-restart';
    const { fence, lock } = redisLockKeys('', 'mutex', name);
    const raw = servers.map((server) => new Redis(server.url, { lazyConnect: false }));
    try {
      await raw[0]!.set(fence, '1000');
      await raw[1]!.del(fence);
      await raw[2]!.del(fence);
      const a = createRedisLockProvider({
        nodes: servers.map((server) => server.url),
        leaseMs: testLeaseMs,
        commandTimeoutMs,
        autoExtend: false,
      });
      await servers[2]!.pause();
      let held: LockHandle;
      try {
        held = await a.createLock(name).acquire({ timeout: 2000 });
      } finally {
        await servers[2]!.resume();
      }
      // Nodes 0 and 1 drew 1001 and 1: they disagree, so both redraw above 1001.
      expect(held.fencingToken).toBe(1002n);
      // A vanishes: its hold disappears without a release (no fence raise on the way out).
      for (const client of raw) await client.del(lock);
      const b = provider();
      await warm(b);
      await servers[0]!.pause();
      try {
        const next = await b.createLock(name).acquire({ timeout: 2000 });
        expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
        await next.release();
      } finally {
        await servers[0]!.resume();
      }
      a.close().catch(() => {});
    } finally {
      for (const client of raw) client.disconnect();
    }
  });

  it('a Redlock grant is one round when the granting counters agree; a lagging node in the quorum is lifted before the token is handed out', async () => {
    const name = 'fence-one-round';
    const { fence } = redisLockKeys('', 'mutex', name);
    const raw = servers.map((server) => new Redis(server.url, { lazyConnect: false }));
    // Script calls (EVALSHA, or EVAL after a NOSCRIPT) each node has served so far.
    const scriptCalls = (): Promise<number[]> =>
      Promise.all(
        raw.map(async (client) => {
          const stats = await client.info('commandstats');
          let calls = 0;
          for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) {
            calls += Number(match[1]);
          }
          return calls;
        }),
      );
    const a = createRedisLockProvider({
      nodes: servers.map((server) => server.url),
      leaseMs: testLeaseMs,
      commandTimeoutMs,
      autoExtend: false,
    });
    try {
      await warm(a);
      // Every node has run the warm-up's release script (its key is gone everywhere).
      const warmUp = redisLockKeys('', 'mutex', 'warm-up').lock;
      await eventually(
        async () => (await Promise.all(raw.map((c) => c.exists(warmUp)))).every((n) => n === 0),
        1000,
      );
      await Promise.all(raw.map((client) => client.set(fence, '7')));
      const before = await scriptCalls();
      const steady = await a.createLock(name).acquire({ timeout: 2000 });
      const after = await scriptCalls();
      expect(steady.fencingToken).toBe(8n);
      // The acquire script on a quorum (the third may still be running it), and no
      // fence-raising script after it anywhere.
      const served = after.map((calls, index) => calls - before[index]!);
      expect(Math.max(...served), `script calls per node: ${served.join(', ')}`).toBe(1);
      expect(served.filter((calls) => calls === 1).length).toBeGreaterThanOrEqual(2);
      await steady.release();
      // Node 2 lags (a restart lost its counter); node 0 is paused, so the quorum is 1 and 2.
      await raw[2]!.set(fence, '3');
      await servers[0]!.pause();
      try {
        const lifted = await a.createLock(name).acquire({ timeout: 2000 });
        // Nodes 1 and 2 drew 9 and 4: both were lifted to 9 and drew again (10).
        expect(lifted.fencingToken).toBe(10n);
        // Read the moment the token is ours: node 2 already counts it.
        expect(BigInt((await raw[2]!.get(fence)) ?? '0')).toBeGreaterThanOrEqual(10n);
        await lifted.release();
      } finally {
        await servers[0]!.resume();
      }
    } finally {
      await a.close();
      for (const client of raw) client.disconnect();
    }
  });

  it('a paused majority: acquire({ timeout }) rejects at its deadline and tryAcquire() at once with BackendUnavailableError, acquire() waits it out, no phantom lock', async () => {
    const [p1, p2] = [provider(), provider()];
    const name = 'paused-majority';
    await warm(p1);
    await servers[0]!.pause();
    await servers[1]!.pause();
    let timedOut: unknown;
    let single: unknown;
    let unbounded: unknown;
    const giveUp = new AbortController();
    const gaveUp = new Error('gave up');
    setTimeout(() => giveUp.abort(gaveUp), 1500);
    try {
      [timedOut, single, unbounded] = await Promise.all([
        p1
          .createLock(name)
          .acquire({ timeout: 1000 })
          .catch((e: unknown) => e),
        p1
          .createLock(name)
          .tryAcquire()
          .catch((e: unknown) => e),
        p1
          .createLock(name)
          .acquire({ signal: giveUp.signal })
          .catch((e: unknown) => e),
      ]);
    } finally {
      await servers[0]!.resume();
      await servers[1]!.resume();
    }
    // The deadline passed while no quorum could be reached: the outage, not a timeout. The
    // other two calls take node 2 in turns, so it may have said "held" to this attempt: then
    // one failed node already decides it, and the other paused node may be listed first as
    // "no answer yet".
    expect(BackendUnavailableError.isInstance(timedOut)).toBe(true);
    expect((timedOut as Error).message).toMatch(
      /no majority: [12] of 3 nodes failed \((Redis node [01] \([\d.:]+\): no answer yet; )?Redis node [01] \(127\.0\.0\.1:\d+\) did not answer/,
    );
    const failures = ((timedOut as Error).cause as AggregateError).errors;
    expect(failures.length).toBeGreaterThanOrEqual(1);
    // One attempt reports the outage at once.
    expect(BackendUnavailableError.isInstance(single)).toBe(true);
    expect((single as Error).message).toMatch(/no majority/);
    // A wait without a deadline rides through it until its caller gives up.
    expect(unbounded).toBe(gaveUp);
    // On resume the paused nodes run the stale attempts, then their cancels: the lock is free.
    const { lock } = redisLockKeys('', 'mutex', name);
    for (const server of servers) {
      await eventually(async () => (await rawKeys(server.url, lock)).length === 0, 2000);
    }
    const next = await p2.createLock(name).tryAcquire();
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('a paused majority that comes back before the timeout: the waiting acquire gets the lock', async () => {
    const p1 = provider();
    const name = 'paused-majority-back';
    await warm(p1);
    const waiting = new Promise<void>((resolve) => {
      const onWait = (message: unknown): void => {
        if ((message as LockEvent).name !== name) return;
        diagnostics.unsubscribe(channelNames.wait, onWait);
        resolve();
      };
      diagnostics.subscribe(channelNames.wait, onWait);
    });
    await servers[0]!.pause();
    await servers[1]!.pause();
    let acquired: Promise<LockHandle>;
    try {
      acquired = p1.createLock(name).acquire({ timeout: 10_000 });
      // Its attempts found no quorum, and it waits instead of failing (a failure ends the race).
      await Promise.race([waiting, acquired.then(() => undefined)]);
    } finally {
      await servers[0]!.resume();
      await servers[1]!.resume();
    }
    const handle = await acquired;
    expect(await handle.release()).toBe(true);
  });

  it('a lease outlives 3× its TTL while extended, on one node and on three', async () => {
    const setups = [[servers[0]!.url], servers.map((server) => server.url)];
    await Promise.all(
      setups.map(async (urls) => {
        const [p1, p2] = [provider(urls), provider(urls)];
        const handle = await p1.createSemaphore(`long-hold-${urls.length}`, 1).acquire();
        await delay(3 * testLeaseMs + 200);
        expect(handle.signal.aborted).toBe(false);
        expect(await p2.createSemaphore(`long-hold-${urls.length}`, 1).tryAcquire()).toBeNull();
        expect(await handle.release()).toBe(true);
      }),
    );
  });

  it('a hold deleted on a minority survives; deleted on a majority fires the lost signal', async () => {
    const urls = servers.map((server) => server.url);
    const [p1, p2] = [provider(urls), provider(urls)];
    const handle = await p1.createLock('deleted').acquire();
    await deleteHold(handle, urls.slice(0, 1));
    await extensions(handle, 3); // a majority still holds it: extensions keep succeeding
    expect(handle.signal.aborted).toBe(false);
    await deleteHold(handle, urls.slice(1, 2));
    const started = performance.now();
    await eventually(() => handle.signal.aborted, p1.capabilities.lostDetectionMs);
    expect(performance.now() - started).toBeLessThanOrEqual(
      testLeaseMs / 3 + commandTimeoutMs + scaled(100),
    );
    expect(LockLostError.isInstance(handle.signal.reason)).toBe(true);
    expect(await handle.release()).toBe(false);
    const next = await p2.createLock('deleted').tryAcquire();
    expect(next?.fencingToken).toBeGreaterThan(handle.fencingToken);
    await next?.release();
  });

  it('a node killed during a hold: release still succeeds and the lock is free', async () => {
    const own = await startRedisServers(3, { useEnvironment: false });
    try {
      const urls = own.map((server) => server.url);
      const [p1, p2] = [provider(urls), provider(urls)];
      const handle = await p1.createLock('killed').acquire();
      await own[2]!.kill();
      expect(await handle.release()).toBe(true);
      const next = await p2.createLock('killed').acquire({ timeout: 1000 });
      expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
      expect(await next.release()).toBe(true);
    } finally {
      await Promise.all(own.map((server) => server.stop()));
    }
  });
});

describe('single node under faults', () => {
  it('an acquire whose reply timed out is undone (phantom-acquire safety)', async () => {
    const url = servers[2]!.url;
    const [p1, p2] = [provider([url]), provider([url])];
    await warm(p1);
    await servers[2]!.pause();
    let error: unknown;
    try {
      error = await p1
        .createLock('phantom')
        .tryAcquire()
        .catch((e: unknown) => e);
    } finally {
      await servers[2]!.resume();
    }
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    // The server runs the acquire when it resumes — and right after it, the cancel.
    const next = await p2.createLock('phantom').acquire({ timeout: 2000 });
    const { lock } = redisLockKeys('', 'mutex', 'phantom');
    const client = new Redis(url);
    try {
      const holder = await client.get(lock);
      expect(holder).not.toBeNull();
      expect(await next.release()).toBe(true);
      expect(await client.exists(lock)).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it('no command waits in the offline queue of ioredis: a down server fails fast, nothing replays later', async () => {
    const own = await startRedisServers(1, { useEnvironment: false });
    const server = own[0]!;
    // An injected client with ioredis defaults (offline queue on, resend on reconnect).
    const injected = new Redis(server.url);
    injected.on('error', () => undefined);
    try {
      const p1 = createRedisLockProvider({
        nodes: injected,
        leaseMs: testLeaseMs,
        commandTimeoutMs,
      });
      providers.push(p1);
      await warm(p1);
      await server.kill();
      const started = performance.now();
      const error = await p1
        .createLock('offline')
        .tryAcquire()
        .catch((e: unknown) => e);
      expect(BackendUnavailableError.isInstance(error)).toBe(true);
      expect(performance.now() - started).toBeLessThan(commandTimeoutMs + scaled(200));
      await server.restart();
      await eventually(() => injected.status === 'ready', 10_000);
      await injected.ping(); // answered after anything ioredis had queued
      const { lock } = redisLockKeys('', 'mutex', 'offline');
      expect(await injected.exists(lock)).toBe(0);
      const handle = await p1.createLock('offline').acquire({ timeout: 2000 });
      expect(await handle.release()).toBe(true);
    } finally {
      injected.disconnect();
      await server.stop();
    }
  });

  it('a release wakes one waiting provider, not all of them (no cross-process herd)', async () => {
    const url = servers[2]!.url;
    const options = { nodes: [url], leaseMs: 30_000, pollIntervalMs: 60_000 };
    const holder = createRedisLockProvider(options);
    const waiters = Array.from({ length: 4 }, () => createRedisLockProvider(options));
    providers.push(holder, ...waiters);
    const held = await holder.createLock('herd').acquire();
    const waits = waiters.map((waiter) => waiter.createLock('herd').acquire({ timeout: 10_000 }));
    const raw = new Redis(url);
    try {
      const { waiters: registry } = redisLockKeys('', 'mutex', 'herd');
      await eventually(async () => (await raw.zcard(registry)) === 4, 5000); // all four wait
      await raw.config('RESETSTAT');
      await held.release();
      const first = await Promise.race(waits);
      const stats = await raw.info('commandstats');
      const scripts = Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 'NaN');
      expect(scripts).toBe(2); // the release and the woken provider's attempt
      // The others follow one by one, each woken by the previous holder's release.
      await first.release();
      await Promise.all(waits.map((wait) => wait.then((handle) => handle.release())));
    } finally {
      raw.disconnect();
    }
  });
});
