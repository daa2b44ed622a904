import { LockTimeoutError } from '@lockkit/core';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { advisoryKey } from '../src/index.js';
import { advisoryLocks, Harness, timeScale, uniqueName, waitFor } from './support.js';

const url = inject('lockkitServers').postgresUrl!;
const harness = new Harness(url);

describe('server-side waits', () => {
  it('writer preference comes from the server queue: a queued writer refuses readers of any client', async () => {
    const name = uniqueName('writer-preference');
    const key = advisoryKey('', 'read', name);
    const [readers, writers] = [harness.provider(), harness.provider()];
    const admin = await harness.client();
    const reader = await readers.createReadWriteLock(name).acquireRead();
    // Before any writer waits, a plain client gets a shared lock at once.
    const outsider = await harness.client();
    const before = await outsider.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock_shared($1::bigint) AS ok',
      [key.toString()],
    );
    expect(before.rows[0]!.ok).toBe(true);
    await outsider.query('SELECT pg_advisory_unlock_shared($1::bigint)', [key.toString()]);
    const writer = writers.createReadWriteLock(name).acquireWrite({ timeout: 20_000 });
    await waitFor(
      async () => (await advisoryLocks(admin, key)).some((row) => !row.granted),
      5000,
      'the writer to queue',
    );
    // The server's queue: one granted ShareLock, one waiting ExclusiveLock.
    const rows = await advisoryLocks(admin, key);
    expect(rows.map(({ mode, granted }) => ({ mode, granted }))).toEqual([
      { mode: 'ShareLock', granted: true },
      { mode: 'ExclusiveLock', granted: false },
    ]);
    // No lockkit code involved: a plain session is refused behind the queued writer ...
    const during = await outsider.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock_shared($1::bigint) AS ok',
      [key.toString()],
    );
    expect(during.rows[0]!.ok).toBe(false);
    // ... and so is a new reader of the process that already holds a read lock.
    expect(await readers.createReadWriteLock(name).tryAcquireRead()).toBeNull();
    await reader.release();
    const granted = await writer;
    expect(granted.kind).toBe('write');
    expect(await readers.createReadWriteLock(name).tryAcquireRead()).toBeNull();
    await granted.release();
  });

  it('mutex waiters are granted in arrival order (the server queue)', async () => {
    const name = uniqueName('fifo');
    const key = advisoryKey('', 'mutex', name);
    const admin = await harness.client();
    const holder = await harness.provider().createLock(name).acquire();
    const order: number[] = [];
    const waiters = [];
    for (let i = 0; i < 4; i++) {
      const provider = harness.provider();
      waiters.push(
        provider
          .createLock(name)
          .acquire({ timeout: 20_000 })
          .then(async (handle) => {
            order.push(i);
            await handle.release();
          }),
      );
      await waitFor(
        async () =>
          (await advisoryLocks(admin, key)).filter((row) => !row.granted).length === i + 1,
        5000,
        `waiter ${i} to queue`,
      );
    }
    await holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('a timeout ends the server wait (lock_timeout): nothing stays queued', async () => {
    const name = uniqueName('timeout');
    const key = advisoryKey('', 'mutex', name);
    const admin = await harness.client();
    const holder = await harness.provider().createLock(name).acquire();
    const started = performance.now();
    const error = await harness
      .provider()
      .createLock(name)
      .acquire({ timeout: 300 })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(LockTimeoutError.isInstance(error)).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(295);
    expect(elapsed).toBeLessThan(300 + 200 * timeScale);
    expect(await advisoryLocks(admin, key)).toEqual([
      expect.objectContaining({ granted: true, pid: expect.any(Number) }),
    ]);
    await holder.release();
  });

  it('an abort cancels the server wait at once (cancel request): the waiter leaves the queue', async () => {
    const name = uniqueName('abort');
    const key = advisoryKey('', 'mutex', name);
    const admin = await harness.client();
    const holder = await harness.provider().createLock(name).acquire();
    const controller = new AbortController();
    const waiting = harness
      .provider()
      .createLock(name)
      .acquire({ signal: controller.signal })
      .catch((e: unknown) => e);
    await waitFor(
      async () => (await advisoryLocks(admin, key)).some((row) => !row.granted),
      5000,
      'the waiter to queue',
    );
    const reason = new Error('gave up');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    await waitFor(
      async () => (await advisoryLocks(admin, key)).every((row) => row.granted),
      1000,
      'the server wait to end',
    );
    const stuck = await admin.query(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
      [`%${key}%`],
    );
    expect(stuck.rows).toEqual([]);
    await holder.release();
  });

  it('grants racing timeouts and aborts are never leaked (50 rounds)', async () => {
    const name = uniqueName('race');
    const key = advisoryKey('', 'mutex', name);
    const admin = await harness.client();
    const [holders, racers] = [harness.provider(), harness.provider()];
    for (let round = 0; round < 50; round++) {
      const holder = await holders.createLock(name).acquire({ timeout: 5000 });
      const controller = new AbortController();
      const timeout = 20 + (round % 7);
      const racer = racers
        .createLock(name)
        .acquire({ timeout, signal: controller.signal })
        .then(
          async (handle) => expect(await handle.release()).toBe(true),
          () => undefined,
        );
      await new Promise((resolve) => setTimeout(resolve, timeout - 2 + (round % 5)));
      void holder.release();
      if (round % 2 === 0) controller.abort(new Error('race'));
      await racer;
      // Whatever won, nothing may be left held or queued.
      await waitFor(
        async () => (await advisoryLocks(admin, key)).length === 0,
        2000,
        `round ${round} to leave the key free`,
      );
    }
  }, 60_000);

  it('a role or session statement_timeout does not cut a wait short (own and pooled sessions)', async () => {
    const impatient = { connectionString: url, options: '-c statement_timeout=100' };
    const pool = new pg.Pool({ ...impatient, max: 12 });
    try {
      for (const provider of [
        harness.provider({ connection: impatient }),
        harness.provider({ pool }),
      ]) {
        const name = uniqueName('statement-timeout');
        const holder = await harness.provider().createLock(name).acquire();
        const waiting = provider.createLock(name).acquire({ timeout: 5000 });
        await new Promise((resolve) => setTimeout(resolve, 400));
        await holder.release();
        const handle = await waiting;
        expect(await handle.release()).toBe(true);
        await provider.close();
      }
      // The pooled sessions keep their own setting (ours was local to the wait).
      const check = await pool.query<{ value: string }>(
        "SELECT current_setting('statement_timeout') AS value",
      );
      expect(check.rows[0]!.value).toBe('100ms');
    } finally {
      await pool.end();
    }
  });

  it('while a lock is contended, the next acquire waits on the server at once (no failed try first)', async () => {
    // Statements are counted on the provider's own sessions, borrowed from a pool we watch.
    const statements: string[] = [];
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    pool.on('connect', (client) => {
      const query = client.query;
      client.query = function (this: unknown, ...args: unknown[]) {
        const first = args[0] as string | { text?: string };
        statements.push(typeof first === 'string' ? first : String(first?.text));
        return Reflect.apply(query, this, args);
      } as typeof client.query;
    });
    try {
      const name = uniqueName('contended');
      const key = advisoryKey('', 'mutex', name);
      const admin = await harness.client();
      const holders = harness.provider();
      const waiter = harness.provider({ pool });
      const queued = async () => (await advisoryLocks(admin, key)).some((row) => !row.granted);
      const handles = [];
      // Twice: another client holds the lock, our acquire waits, the holder lets go.
      for (let round = 0; round < 2; round++) {
        const holder = await holders.createLock(name).acquire();
        const waiting = waiter.createLock(name).acquire({ timeout: 20_000 });
        await waitFor(queued, 5000, 'our wait');
        await holder.release();
        const handle = await waiting;
        handles.push(handle);
        await handle.release();
      }
      expect(handles[1]!.fencingToken).toBeGreaterThan(handles[0]!.fencingToken);
      // Only the first acquire tried before waiting (the second came within a second of the
      // failed try); both waited on the server.
      const tries = statements.filter((sql) => sql.includes('pg_try_advisory_lock('));
      const waits = statements.filter((sql) => sql.includes('pg_advisory_lock('));
      expect([tries.length, waits.length]).toEqual([1, 2]);
      await waiter.close();
    } finally {
      await pool.end();
    }
  });

  it('more waiters than maxWaitConnections queue in-process and are all served', async () => {
    const name = uniqueName('gate');
    const provider = harness.provider({ maxWaitConnections: 2, sharedConnections: 1 });
    const holder = await harness.provider().createLock(name).acquire();
    let inside = 0;
    let overlaps = 0;
    const tasks = Array.from({ length: 8 }, () =>
      provider.createLock(name).withLock(
        async () => {
          inside += 1;
          if (inside > 1) overlaps += 1;
          await new Promise((resolve) => setTimeout(resolve, 2));
          inside -= 1;
        },
        { timeout: 20_000 },
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(provider.connectionCount).toBeLessThanOrEqual(3); // 2 waiting + 1 shared
    await holder.release();
    await Promise.all(tasks);
    expect(overlaps).toBe(0);
  });

  it('an acquire queued in-process behind maxWaitConnections leaves promptly when aborted', async () => {
    const name = uniqueName('gate-abort');
    const provider = harness.provider({ maxWaitConnections: 1 });
    const holder = await harness.provider().createLock(name).acquire();
    const first = provider.createLock(name).acquire({ timeout: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 100)); // first occupies the one wait slot
    const controller = new AbortController();
    const second = provider
      .createLock(name)
      .acquire({ signal: controller.signal })
      .catch((e: unknown) => e);
    const third = provider.createLock(name).acquire({ timeout: 20_000 });
    const reason = new Error('not any more');
    const started = performance.now();
    controller.abort(reason);
    expect(await second).toBe(reason);
    expect(performance.now() - started).toBeLessThan(100 * timeScale);
    await holder.release();
    const firstHandle = await first;
    await firstHandle.release();
    const thirdHandle = await third;
    expect(thirdHandle.fencingToken).toBeGreaterThan(firstHandle.fencingToken);
    await thirdHandle.release();
  });
});
