import { BackendUnavailableError, InvalidArgumentError } from '@lockkit/core';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createPostgresLockProvider, type PostgresLockProviderOptions } from '../src/index.js';
import { Harness, sessionsOf, uniqueApplication, uniqueName, waitFor } from './support.js';

const url = inject('lockkitServers').postgresUrl!;
const harness = new Harness(url);

describe('options', () => {
  it('are validated at construction with InvalidArgumentError, before any I/O', () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const bad: unknown[] = [
      undefined,
      null,
      {},
      { connection: url, pool },
      { connection: 'mysql://x' },
      { connection: 'not a url' },
      { connection: 42 },
      { pool: {} },
      { connection: url, typo: 1 },
      { connection: url, namespace: 1 },
      { connection: url, sharedConnections: 0 },
      { connection: url, sharedConnections: 1.5 },
      { connection: url, maxWaitConnections: 0 },
      { connection: url, idleTimeoutMs: -1 },
      { connection: url, keepaliveIntervalMs: 5 },
      { connection: url, keepaliveTimeoutMs: Number.NaN },
      { connection: url, pollIntervalMs: 2 ** 31 },
      { connection: url, fencingSequence: ' ' },
      { connection: url, createFencingSequence: 'yes' },
      { connection: url, applicationName: 7 },
      { connection: url, connectTimeoutMs: 0 },
      { connection: url, connectTimeoutMs: '5000' },
      { connection: { connectionString: url, connectionTimeoutMillis: 1000 } },
    ];
    for (const options of bad) {
      expect(
        () => createPostgresLockProvider(options as PostgresLockProviderOptions),
        JSON.stringify(options),
      ).toThrow(InvalidArgumentError);
    }
    expect(pool.totalCount).toBe(0); // nothing connected
  });

  it('declares honest capabilities derived from the options', () => {
    const provider = harness.provider({
      keepaliveIntervalMs: 1000,
      keepaliveTimeoutMs: 2000,
      pollIntervalMs: 250,
      connectTimeoutMs: 4000,
    });
    expect(provider.backend).toBe('postgres');
    expect(provider.capabilities).toEqual({
      crossProcess: true,
      handOver: false,
      inspection: true,
      leases: false,
      minLeaseMs: Number.POSITIVE_INFINITY,
      weightedPermits: true,
      fifo: false,
      lostDetectionMs: 3000,
      abandonedReleaseMs: 1300,
      // max(connectTimeoutMs, keepaliveIntervalMs + keepaliveTimeoutMs) + 250
      unavailableMs: 4250,
    });
    expect(Object.isFrozen(provider.capabilities)).toBe(true);
    expect(harness.provider({ connectTimeoutMs: 100 }).capabilities.unavailableMs).toBe(10_250);
  });

  it('copies connection options: later changes to the caller object do not leak in', async () => {
    const application = uniqueApplication();
    const connection: pg.ClientConfig = { connectionString: url, application_name: application };
    const provider = harness.provider({ connection });
    connection.application_name = 'changed-afterwards';
    const handle = await provider.createLock(uniqueName('copy')).acquire();
    const admin = await harness.client();
    expect(await sessionsOf(admin, application)).toBe(1);
    await handle.release();
  });
});

describe('an unreachable server', () => {
  it('fails acquires with BackendUnavailableError (cause kept) and nothing in the background', async () => {
    const provider = harness.provider({
      connection: { connectionString: 'postgres://postgres@127.0.0.1:1/postgres' },
    });
    for (const attempt of [
      () => provider.createLock('x').tryAcquire(),
      () => provider.createReadWriteLock('x').acquireRead({ timeout: 100 }),
      () => provider.createSemaphore('x', 2).acquire({ timeout: 100 }),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(BackendUnavailableError.isInstance(error)).toBe(true);
      expect((error as Error).cause).toBeInstanceOf(Error);
    }
    expect(provider.connectionCount).toBe(0);
  });
});

describe('an injected pg.Pool', () => {
  it('is used, returned to and never ended; close() leaves no session of ours checked out', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 12 });
    try {
      const provider = createPostgresLockProvider({ pool });
      const name = uniqueName('pool');
      const held = await provider.createLock(name).acquire();
      const permit = await provider.createSemaphore(name, 1).acquire();
      const waiter = provider.createSemaphore(name, 1).acquire({ timeout: 5000 }); // LISTENs
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(pool.totalCount).toBeGreaterThan(0);
      expect(pool.idleCount).toBeLessThan(pool.totalCount);
      await permit.release();
      await (await waiter).release();
      await held.release();
      await provider.close();
      expect(pool.ended).toBe(false);
      await waitFor(() => pool.idleCount === pool.totalCount, 2000, 'every client back');
      // The pool still works, its clients hold no locks and listen to nothing.
      const check = await pool.query<{ locks: number; channels: number }>(
        `SELECT (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks,
                (SELECT count(*)::int FROM pg_listening_channels()) AS channels`,
      );
      expect(check.rows[0]).toEqual({ locks: 0, channels: 0 });
    } finally {
      await pool.end();
    }
  });

  it('a provider closed while holding locks frees them (destroys those sessions)', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 12 });
    try {
      const provider = createPostgresLockProvider({ pool });
      const name = uniqueName('closed-holding');
      await provider.createLock(name).acquire();
      await provider.close();
      const next = await harness.provider().createLock(name).tryAcquire();
      expect(next).not.toBeNull();
      await next?.release();
    } finally {
      await pool.end();
    }
  });
});

describe('close()', () => {
  it('leaves no session of the provider on the server', async () => {
    const application = uniqueApplication();
    const provider = createPostgresLockProvider({ connection: url, applicationName: application });
    const admin = await harness.client();
    const name = uniqueName('close');
    const handles = await Promise.all([
      provider.createLock(name).acquire(),
      provider.createReadWriteLock(name).acquireRead(),
      provider.createSemaphore(name, 2).acquire(),
    ]);
    const blocked = provider.createSemaphore(name, 1).tryAcquire({ timeout: 100 });
    expect(await sessionsOf(admin, application)).toBeGreaterThan(0);
    await blocked;
    await provider.close();
    expect(provider.connectionCount).toBe(0);
    await waitFor(
      async () => (await sessionsOf(admin, application)) === 0,
      2000,
      'sessions to end',
    );
    for (const handle of handles) expect(await handle.release()).toBe(true);
  });
});
