import { BackendUnavailableError, LockLostError } from '@lockkit/core';
import {
  postgresLogin,
  type ServerHandle,
  startPostgres,
  startSessionSwappingProxy,
} from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSettings } from './global-setup.js';
import { abortedWithin, Harness, timeScale, uniqueName, waitFor } from './support.js';

// Faults on the server itself: this file runs its own PostgreSQL.
let server: ServerHandle;
beforeAll(async () => {
  server = await startPostgres({ useEnvironment: false, settings: postgresSettings });
}, 60_000);
afterAll(() => server?.stop());

const harness = new Harness('postgres://unused'); // providers get the URL per test
const keepalive = { keepaliveIntervalMs: 100, keepaliveTimeoutMs: 300 };

describe('lost-lock signal', () => {
  it('pg_terminate_backend on the holder: every lock on that session is lost, others are not', async () => {
    const provider = harness.provider({ connection: server.url, sharedConnections: 1 });
    const admin = await harness.client({ connectionString: server.url });
    const [a, b] = [uniqueName('a'), uniqueName('b')];
    const first = await provider.createLock(a).acquire();
    const second = await provider.createLock(b).acquire();
    expect(provider.backendPidOf(first)).toBe(provider.backendPidOf(second));
    // A waited-for lock lives on another session.
    const blocker = harness.provider({ connection: server.url });
    const c = uniqueName('c');
    const blocking = await blocker.createLock(c).acquire();
    const waiting = provider.createLock(c).acquire({ timeout: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await blocking.release();
    const third = await waiting;
    expect(provider.backendPidOf(third)).not.toBe(provider.backendPidOf(first));
    const started = performance.now();
    await admin.query('SELECT pg_terminate_backend($1)', [provider.backendPidOf(first)]);
    const reasons = await Promise.all([
      abortedWithin(first.signal, 2000),
      abortedWithin(second.signal, 2000),
    ]);
    expect(performance.now() - started).toBeLessThan(1000 * timeScale);
    for (const reason of reasons) expect(LockLostError.isInstance(reason)).toBe(true);
    expect(third.signal.aborted).toBe(false);
    expect(await first.release()).toBe(false);
    expect(await second.release()).toBe(false);
    // The server freed them with the session.
    const other = harness.provider({ connection: server.url });
    const retaken = await other.createLock(a).tryAcquire();
    expect(retaken).not.toBeNull();
    await retaken?.release();
    expect(await third.release()).toBe(true);
  });

  it('a paused (SIGSTOPped) server: the keepalive deadline fires the signal, and the lock is free after resume', async () => {
    const provider = harness.provider({ connection: server.url, ...keepalive });
    const name = uniqueName('paused');
    const handle = await provider.createLock(name).acquire();
    await server.pause();
    let reason: unknown;
    try {
      reason = await abortedWithin(handle.signal, 100 + 300 + 1000);
    } finally {
      await server.resume();
    }
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(String((reason as Error).message)).toMatch(/keepalive/);
    expect(await handle.release()).toBe(false);
    // Our side destroyed the socket; the server ends the session and frees the lock.
    const other = harness.provider({ connection: server.url });
    const next = await other.createLock(name).acquire({ timeout: 5000 });
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    await next.release();
  });

  it('an attempt on a frozen server fails within the keepalive bound instead of hanging', async () => {
    const provider = harness.provider({ connection: server.url, ...keepalive });
    const warm = await provider.createLock(uniqueName('warm')).acquire();
    await warm.release(); // the session stays open, holding nothing
    await server.pause();
    let error: unknown;
    const started = performance.now();
    try {
      error = await provider
        .createLock(uniqueName('frozen'))
        .tryAcquire()
        .catch((e: unknown) => e);
    } finally {
      await server.resume();
    }
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    expect(performance.now() - started).toBeLessThan((100 + 300 + 1000) * timeScale);
  });

  it('aborting a wait on a frozen server is prompt; close() gives the session up within its budget', async () => {
    const name = uniqueName('frozen-wait');
    const holder = harness.provider({ connection: server.url });
    const waiter = harness.provider({ connection: server.url });
    const held = await holder.createLock(name).acquire();
    const controller = new AbortController();
    const waiting = waiter
      .createLock(name)
      .acquire({ signal: controller.signal })
      .catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 200)); // queued on the server
    await server.pause();
    let closedAfter: number;
    try {
      const reason = new Error('gave up');
      const started = performance.now();
      controller.abort(reason);
      expect(await waiting).toBe(reason);
      // Core waits up to 250 ms for the cancel to be confirmed; a frozen server never does.
      expect(performance.now() - started).toBeLessThan((250 + 100) * timeScale);
      // Cancel requests go unanswered; after 5 s the session is destroyed instead.
      await waiter.close();
      closedAfter = performance.now() - started;
    } finally {
      await server.resume();
    }
    expect(closedAfter).toBeLessThan(7000 * timeScale);
    expect(await held.release()).toBe(true);
    const next = await harness
      .provider({ connection: server.url })
      .createLock(name)
      .acquire({ timeout: 5000 });
    await next.release();
  }, 30_000);

  it('a server restart ends the session: the signal aborts, and the lock is free afterwards', async () => {
    const provider = harness.provider({ connection: server.url });
    const name = uniqueName('restart');
    const handle = await provider.createLock(name).acquire();
    const lost = abortedWithin(handle.signal, 10_000);
    await server.restart();
    expect(LockLostError.isInstance(await lost)).toBe(true);
    const next = await harness.provider({ connection: server.url }).createLock(name).tryAcquire();
    expect(next).not.toBeNull();
    expect(next!.fencingToken).toBeGreaterThan(handle.fencingToken);
    await next?.release();
    // The provider itself recovers: new sessions for new acquires.
    const again = await provider.createLock(uniqueName('after')).tryAcquire();
    expect(again).not.toBeNull();
    await again?.release();
  }, 60_000);

  it('a pooler that moves the session to another backend (changed pg_backend_pid) fires the signal', async () => {
    const { hostname, port } = new URL(server.url);
    const proxy = await startSessionSwappingProxy(hostname, Number(port), postgresLogin);
    try {
      const provider = harness.provider({
        connection: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
        keepaliveIntervalMs: 100,
        keepaliveTimeoutMs: 1000,
      });
      const name = uniqueName('pooler');
      const handle = await provider.createLock(name).acquire();
      const before = provider.backendPidOf(handle);
      await proxy.swap();
      const reason = await abortedWithin(handle.signal, 3000);
      expect(LockLostError.isInstance(reason)).toBe(true);
      expect(String((reason as Error).message)).toMatch(
        new RegExp(`pg_backend_pid\\(\\) changed from ${before}`),
      );
      expect(await handle.release()).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('background failures never surface as unhandled rejections or throws', async () => {
    const provider = harness.provider({ connection: server.url, ...keepalive });
    const handles = await Promise.all(
      Array.from({ length: 5 }, (_, i) => provider.createLock(uniqueName(`bg-${i}`)).acquire()),
    );
    const admin = await harness.client({ connectionString: server.url });
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lockkit' AND pid <> pg_backend_pid()`,
    );
    await waitFor(() => handles.every((handle) => handle.signal.aborted), 3000, 'every signal');
    await new Promise((resolve) => setTimeout(resolve, 300)); // keepalive ticks would run now
    for (const handle of handles) expect(await handle.release()).toBe(false);
  });
});
