import type { LockHandle } from '@lockkit/core';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { advisoryKey } from '../src/index.js';
import {
  advisoryLocks,
  Harness,
  sessionsOf,
  timeScale,
  uniqueApplication,
  uniqueName,
  waitFor,
} from './support.js';

const url = inject('lockkitServers').postgresUrl!;
const harness = new Harness(url);

describe('multiplexing', () => {
  it('10 000 locks held at once over at most 10 server connections (pg_stat_activity)', async () => {
    const application = uniqueApplication();
    const provider = harness.provider({ applicationName: application });
    const admin = await harness.client();
    const prefix = uniqueName('many');
    const handles: LockHandle[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const acquired = await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          provider.createLock(`${prefix}:${batch * 500 + i}`).tryAcquire(),
        ),
      );
      for (const handle of acquired) {
        expect(handle).not.toBeNull();
        handles.push(handle!);
      }
    }
    expect(handles).toHaveLength(10_000);
    const sessions = await sessionsOf(admin, application);
    expect(sessions).toBeGreaterThan(0);
    expect(sessions).toBeLessThanOrEqual(10);
    expect(provider.connectionCount).toBe(sessions);
    const held = await admin.query<{ count: string }>(
      `SELECT count(*) AS count FROM pg_locks l JOIN pg_stat_activity a USING (pid)
       WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`,
      [application],
    );
    expect(Number(held.rows[0]!.count)).toBe(10_000);
    // Every handle is really exclusive: another provider cannot take a sample of them.
    const other = harness.provider();
    for (const index of [0, 4999, 9999]) {
      expect(await other.createLock(`${prefix}:${index}`).tryAcquire()).toBeNull();
    }
    const released = await Promise.all(handles.map((handle) => handle.release()));
    expect(released.every(Boolean)).toBe(true);
    const left = await admin.query<{ count: string }>(
      `SELECT count(*) AS count FROM pg_locks l JOIN pg_stat_activity a USING (pid)
       WHERE l.locktype = 'advisory' AND a.application_name = $1`,
      [application],
    );
    expect(Number(left.rows[0]!.count)).toBe(0);
  }, 60_000);

  it('a waiting acquire runs on its own session, so a release on the same provider never queues behind it', async () => {
    // An injected pool: its clients are not pipelined, so a wait sharing a session with the
    // holder would block the holder's unlock until the wait ended.
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const provider = harness.provider({ pool, sharedConnections: 1 });
    try {
      const blocker = harness.provider();
      const [mine, theirs] = [uniqueName('mine'), uniqueName('theirs')];
      const held = await provider.createLock(mine).acquire();
      const blocking = await blocker.createLock(theirs).acquire();
      const waiting = provider.createLock(theirs).acquire({ timeout: 20_000 });
      const admin = await harness.client();
      await waitFor(
        async () =>
          (await advisoryLocks(admin, advisoryKey('', 'mutex', theirs))).some(
            (row) => !row.granted,
          ),
        5000,
        'the waiter to queue on the server',
      );
      const waiters = (await advisoryLocks(admin, advisoryKey('', 'mutex', theirs))).filter(
        (row) => !row.granted,
      );
      expect(waiters.map((row) => row.pid)).not.toContain(provider.backendPidOf(held));
      const started = performance.now();
      expect(await held.release()).toBe(true);
      expect(performance.now() - started).toBeLessThan(500 * timeScale);
      expect(await blocking.release()).toBe(true);
      const granted = await waiting;
      expect(await granted.release()).toBe(true);
    } finally {
      await provider.close();
      await pool.end();
    }
  });

  it('never stacks a lock on a session that holds it: the same process is refused', async () => {
    const application = uniqueApplication();
    const provider = harness.provider({ applicationName: application, sharedConnections: 1 });
    const admin = await harness.client();
    const name = uniqueName('stacking');
    const held = await provider.createLock(name).acquire();
    expect(await sessionsOf(admin, application)).toBe(1);
    // On the holder's session PostgreSQL would grant a second pg_try_advisory_lock at once.
    expect(await provider.createLock(name).tryAcquire()).toBeNull();
    expect(await provider.createLock(name).tryAcquire({ timeout: 50 })).toBeNull();
    // (The timed-out wait leaves the server queue right after the caller got null.)
    await waitFor(
      async () => (await advisoryLocks(admin, advisoryKey('', 'mutex', name))).length === 1,
      2000,
      'the timed-out wait to leave the queue',
    );
    expect(await advisoryLocks(admin, advisoryKey('', 'mutex', name))).toEqual([
      { pid: provider.backendPidOf(held), mode: 'ExclusiveLock', granted: true },
    ]);
    expect(await held.release()).toBe(true);
    // Released once = free (nothing was stacked).
    const other = await harness.provider().createLock(name).tryAcquire();
    expect(other).not.toBeNull();
    await other?.release();
  });

  it('a reader and a writer of one process never share a session (no silent upgrade)', async () => {
    const provider = harness.provider({ sharedConnections: 1 });
    const name = uniqueName('upgrade');
    const reader = await provider.createReadWriteLock(name).acquireRead();
    expect(await provider.createReadWriteLock(name).tryAcquireWrite()).toBeNull();
    const second = await provider.createReadWriteLock(name).tryAcquireRead();
    expect(second).not.toBeNull();
    expect(provider.backendPidOf(second!)).not.toBe(provider.backendPidOf(reader));
    await second?.release();
    await reader.release();
    const writer = await provider.createReadWriteLock(name).tryAcquireWrite();
    expect(writer).not.toBeNull();
    await writer?.release();
  });

  it('idle sessions are closed after idleTimeoutMs; held ones stay', async () => {
    const application = uniqueApplication();
    const provider = harness.provider({ applicationName: application, idleTimeoutMs: 50 });
    const admin = await harness.client();
    // Two attempts at once open two sessions (both under sharedConnections = 2).
    const [held, brief] = await Promise.all([
      provider.createLock(uniqueName('kept')).acquire(),
      provider.createLock(uniqueName('brief')).acquire(),
    ]);
    expect(provider.backendPidOf(held)).not.toBe(provider.backendPidOf(brief));
    expect(await sessionsOf(admin, application)).toBe(2);
    await brief.release();
    await waitFor(() => provider.connectionCount === 1, 2000, 'the idle session to close');
    await waitFor(async () => (await sessionsOf(admin, application)) === 1, 2000, 'the server');
    expect(held.signal.aborted).toBe(false);
    await held.release();
    await waitFor(() => provider.connectionCount === 0, 2000, 'the last session to close');
  });
});
