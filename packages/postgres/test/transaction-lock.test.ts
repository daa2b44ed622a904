import { InvalidArgumentError, LockDeadlockError, LockTimeoutError } from '@lockkit/core';
import { describe, expect, inject, it } from 'vitest';
import { advisoryKey } from '../src/index.js';
import { advisoryLocks, Harness, uniqueName, waitFor } from './support.js';

const harness = new Harness(inject('lockkitServers').postgresUrl!);

describe('transaction-scoped locks (pg_advisory_xact_lock)', () => {
  it('are held until COMMIT, exclude session locks of the same name, and carry tokens', async () => {
    const provider = harness.provider();
    const client = await harness.client();
    const name = uniqueName('commit');
    await client.query('BEGIN');
    const lock = await provider.acquireInTransaction(client, name);
    expect(lock).toMatchObject({ name, kind: 'mutex' });
    expect(typeof lock.fencingToken).toBe('bigint');
    expect(await harness.provider().createLock(name).tryAcquire()).toBeNull();
    await client.query('COMMIT');
    const session = await harness.provider().createLock(name).tryAcquire();
    expect(session).not.toBeNull();
    expect(session!.fencingToken).toBeGreaterThan(lock.fencingToken);
    // ... and the other way round: a session lock blocks the transaction lock.
    await client.query('BEGIN');
    expect(await provider.tryAcquireInTransaction(client, name)).toBeNull();
    await client.query('ROLLBACK');
    await session?.release();
  });

  it('are released by ROLLBACK; readers share, a writer excludes', async () => {
    const provider = harness.provider();
    const [a, b] = [await harness.client(), await harness.client()];
    const name = uniqueName('rw');
    await a.query('BEGIN');
    await b.query('BEGIN');
    await provider.acquireInTransaction(a, name, { kind: 'read' });
    expect(await provider.tryAcquireInTransaction(b, name, { kind: 'read' })).not.toBeNull();
    await b.query('ROLLBACK');
    await b.query('BEGIN');
    expect(await provider.tryAcquireInTransaction(b, name, { kind: 'write' })).toBeNull();
    await a.query('ROLLBACK');
    expect(await provider.tryAcquireInTransaction(b, name, { kind: 'write' })).not.toBeNull();
    expect(await harness.provider().createReadWriteLock(name).tryAcquireRead()).toBeNull();
    await b.query('COMMIT');
  });

  it('a timeout leaves the transaction usable and nothing queued', async () => {
    const provider = harness.provider();
    const admin = await harness.client();
    const client = await harness.client();
    const name = uniqueName('timeout');
    const holder = await harness.provider().createLock(name).acquire();
    await client.query('BEGIN');
    await client.query('CREATE TEMP TABLE work (v int) ON COMMIT DROP');
    const started = performance.now();
    const error = await provider
      .acquireInTransaction(client, name, { timeout: 200 })
      .catch((e: unknown) => e);
    expect(LockTimeoutError.isInstance(error)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    expect(await provider.tryAcquireInTransaction(client, name, { timeout: 50 })).toBeNull();
    await client.query('INSERT INTO work VALUES (1)'); // still usable
    const settings = await client.query('SHOW lock_timeout');
    expect(settings.rows[0].lock_timeout).toBe('0');
    await client.query('COMMIT');
    expect(await advisoryLocks(admin, advisoryKey('', 'mutex', name))).toHaveLength(1);
    await holder.release();
  });

  it('an abort cancels the wait (cancel request) and leaves the transaction usable', async () => {
    const provider = harness.provider();
    const admin = await harness.client();
    const client = await harness.client();
    const name = uniqueName('abort');
    const key = advisoryKey('', 'mutex', name);
    const holder = await harness.provider().createLock(name).acquire();
    await client.query('BEGIN');
    const controller = new AbortController();
    const waiting = provider
      .acquireInTransaction(client, name, { signal: controller.signal })
      .catch((e: unknown) => e);
    await waitFor(
      async () => (await advisoryLocks(admin, key)).some((row) => !row.granted),
      5000,
      'the transaction to queue',
    );
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    expect(await advisoryLocks(admin, key)).toHaveLength(1);
    await client.query('SELECT 1');
    await holder.release();
    // A lock granted after the abort is rolled back with the savepoint, not kept.
    await client.query('COMMIT');
  });

  it('a deadlock between two transactions is reported as LockDeadlockError', async () => {
    const provider = harness.provider();
    const [a, b] = [await harness.client(), await harness.client()];
    const [x, y] = [uniqueName('x'), uniqueName('y')];
    await a.query("BEGIN; SET LOCAL deadlock_timeout = '50ms'");
    await b.query("BEGIN; SET LOCAL deadlock_timeout = '50ms'");
    await provider.acquireInTransaction(a, x);
    await provider.acquireInTransaction(b, y);
    // The victim's transaction still holds its first lock: rolling it back lets the other on.
    const settle = (client: typeof a, wanted: string) =>
      provider.acquireInTransaction(client, wanted, { timeout: 10_000 }).then(
        () => 'granted',
        async (error: unknown) => {
          await client.query('ROLLBACK');
          return LockDeadlockError.isInstance(error) ? 'deadlock' : String(error);
        },
      );
    const outcomes = await Promise.all([settle(a, y), settle(b, x)]);
    expect(outcomes.sort()).toEqual(['deadlock', 'granted']);
    await a.query('ROLLBACK');
    await b.query('ROLLBACK');
  });

  it('refuses a client outside a transaction and bad options, before any I/O', async () => {
    const provider = harness.provider();
    const client = await harness.client();
    await expect(provider.acquireInTransaction(client, 'x')).rejects.toSatisfy(
      InvalidArgumentError.isInstance,
    );
    await client.query('BEGIN');
    await expect(
      provider.acquireInTransaction(client, 'x', { kind: 'semaphore' as never }),
    ).rejects.toSatisfy(InvalidArgumentError.isInstance);
    await expect(provider.acquireInTransaction(client, 'x', { timeout: -1 })).rejects.toSatisfy(
      InvalidArgumentError.isInstance,
    );
    await expect(
      provider.acquireInTransaction(client, 'x', { timeoutMs: 5 } as never),
    ).rejects.toSatisfy(InvalidArgumentError.isInstance);
    await client.query('ROLLBACK');
  });
});
