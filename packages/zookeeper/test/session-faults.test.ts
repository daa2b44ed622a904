import { LockLostError } from '@lockkit/core';
import { delay } from '@lockkit/core/backend';
import { type ServerHandle, startZooKeeper } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZooKeeperLockProvider } from '../src/index.js';
import { eventually, RawZooKeeper, testProvider, testSessionTimeoutMs } from './support.js';

/** Faults on a server of this file's own (pause, restart), so other files are not disturbed. */
let server: ServerHandle;
const providers: ZooKeeperLockProvider[] = [];
const provider = (extra: Parameters<typeof testProvider>[1] = {}): ZooKeeperLockProvider => {
  const created = testProvider(server.url, extra);
  providers.push(created);
  return created;
};
beforeAll(async () => {
  server = await startZooKeeper({ tickTimeMs: 200, useEnvironment: false });
});
afterAll(async () => {
  await server.resume();
  await Promise.all(providers.map((created) => created.close()));
  await server.stop();
});

function lostWithin(signal: AbortSignal, ms: number): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not lost within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

describe('ZooKeeper session faults', () => {
  it('session expiry while holding: the signal aborts, the lock is free, the provider reconnects', async () => {
    const [holder, other] = [provider(), provider()];
    const name = `expiry-${Math.random()}`;
    const handle = await holder.createLock(name).acquire();
    const firstClient = holder.currentClient;
    await holder.expireSession();
    const reason = await lostWithin(handle.signal, 1000);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(String((reason as Error).message)).toMatch(/session expired/);
    // The server deleted the node with the session: another client gets the lock at once.
    const next = await other.createLock(name).acquire({ timeout: 2000 });
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    await next.release();
    // New acquires on the same provider transparently use a new session.
    const again = await holder.createLock(name).acquire({ timeout: 5000 });
    expect(holder.currentClient).not.toBe(firstClient);
    expect(again.fencingToken).toBeGreaterThan(next.fencingToken);
    expect(await handle.release()).toBe(false);
    expect(await again.release()).toBe(true);
  });

  it('server paused longer than the session timeout: the holder learns it lost the lock in time', async () => {
    const [holder, waiter] = [provider(), provider()];
    const name = `pause-${Math.random()}`;
    const handle = await holder.createLock(name).acquire();
    const bound = holder.capabilities.lostDetectionMs;
    await server.pause();
    const pausedAt = performance.now();
    let reason: unknown;
    let detectedAfter = Number.NaN;
    try {
      reason = await lostWithin(handle.signal, bound + 500);
      detectedAfter = performance.now() - pausedAt;
      // Keep the server stopped past the session timeout (plus a tick), so it expires the
      // holder's session when it resumes: the fault is a pause LONGER than the timeout.
      await delay(Math.max(0, testSessionTimeoutMs + 200 - detectedAfter));
    } finally {
      await server.resume();
    }
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(String((reason as Error).message)).toMatch(/no reply from ZooKeeper/);
    // Never before the server could have expired the session: not earlier than 2/3 of it.
    expect(detectedAfter).toBeGreaterThan((testSessionTimeoutMs * 2) / 3);
    // After the resume the provider works again (a new session) and so does everyone else.
    const next = await waiter.createLock(name).acquire({ timeout: 10_000 });
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    await next.release();
    const again = await holder.createLock(name).acquire({ timeout: 10_000 });
    await again.release();
  }, 30_000);

  it('server restart while waiting: the waiter keeps its place and gets the lock', async () => {
    // A session timeout longer than the restart (graceful stop + JVM start), so the
    // sessions survive it.
    const [holder, waiter] = [
      provider({ sessionTimeoutMs: 15_000, operationTimeoutMs: 15_000 }),
      provider({ sessionTimeoutMs: 15_000, operationTimeoutMs: 15_000 }),
    ];
    const name = `restart-${Math.random()}`;
    const handle = await holder.createLock(name).acquire();
    const parent = holder.nodePathOf(handle).replace(/\/[^/]+$/, '');
    const waiting = waiter.createLock(name).acquire({ timeout: 30_000 });
    waiting.catch(() => undefined); // awaited below
    let raw = await RawZooKeeper.connect(server.url);
    await eventually(async () => (await raw.children(parent))?.length === 2, 5000, 'waiter');
    await raw.close();
    await server.restart();
    raw = await RawZooKeeper.connect(server.url);
    try {
      // Both nodes (so both sessions) survived the restart.
      expect(await raw.children(parent)).toHaveLength(2);
      expect(handle.signal.aborted).toBe(false);
      expect(await handle.release()).toBe(true);
      const next = await waiting;
      expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
      expect(await next.release()).toBe(true);
      // Tokens keep growing across the restart (czxid carries on from the transaction log).
      const after = await waiter.createLock(name).acquire();
      expect(after.fencingToken).toBeGreaterThan(next.fencingToken);
      await after.release();
    } finally {
      await raw.close();
    }
  }, 60_000);
});
