import { BackendUnavailableError, InvalidArgumentError, LockLostError } from '@lockkit/core';
import pg from 'pg';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { advisoryKey } from '../src/index.js';
import { abortedWithin, Harness, timeScale, uniqueName } from './support.js';

const url = inject('lockkitServers').postgresUrl!;
const harness = new Harness(url);
const keepalive = { keepaliveIntervalMs: 100, keepaliveTimeoutMs: 300 };
const bound = (400 + 500) * timeScale;

describe('inspect() and forceRelease() on PostgreSQL', () => {
  it('forceRelease breaks only that lock: another lock on the same session is kept', async () => {
    const provider = harness.provider({ ...keepalive, sharedConnections: 1 });
    const operator = harness.provider(keepalive);
    const [a, b] = [uniqueName('a'), uniqueName('b')];
    const first = await provider.createLock(a).acquire();
    const second = await provider.createLock(b).acquire();
    const pid = provider.backendPidOf(first);
    expect(provider.backendPidOf(second)).toBe(pid);
    expect(await operator.createLock(a).forceRelease()).toBe(1);
    expect(LockLostError.isInstance(await abortedWithin(first.signal, bound))).toBe(true);
    expect(second.signal.aborted).toBe(false);
    const admin = await harness.client();
    const alive = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    expect(alive.rowCount).toBe(1); // the session was not terminated
    const next = await operator.createLock(a).acquire({ timeout: bound });
    expect(next.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await first.release()).toBe(false);
    expect(await second.release()).toBe(true);
    expect(await next.release()).toBe(true);
  });

  it('a weighted hold is one holder beside a one-permit hold on the same session; a break unlocks all its slots without ending the session', async () => {
    const provider = harness.provider({ ...keepalive, sharedConnections: 1, owner: 'w' });
    const operator = harness.provider(keepalive);
    const name = uniqueName('weighted');
    const three = await provider.createSemaphore(name, 6).acquire({ permits: 3 });
    const one = await provider.createSemaphore(name, 6).acquire();
    const pid = provider.backendPidOf(three);
    expect(provider.backendPidOf(one)).toBe(pid);
    const semaphore = operator.createSemaphore(name, 6);
    const state = await semaphore.inspect();
    const holders = [...state.holders].sort((a, b) => a.permits - b.permits);
    expect(holders.map((h) => [h.permits, h.fencingToken, h.owner])).toEqual([
      [1, one.fencingToken, 'w'],
      [3, three.fencingToken, 'w'],
    ]);
    expect(state.permitsFree).toBe(2);
    expect(await semaphore.forceRelease()).toBe(2);
    for (const handle of [three, one]) {
      expect(LockLostError.isInstance(await abortedWithin(handle.signal, bound))).toBe(true);
    }
    // The keepalive unlocked every slot itself: the session was not terminated.
    const admin = await harness.client();
    const alive = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    expect(alive.rowCount).toBe(1);
    const all = await semaphore.acquire({ permits: 6, timeout: bound });
    expect(await three.release()).toBe(false);
    expect(await all.release()).toBe(true);
  });

  it('a hold without a row (an older client) is reported without token/owner and broken by ending its session', async () => {
    const name = uniqueName('old');
    const other = await harness.client();
    await other.query('SELECT pg_advisory_lock($1::bigint)', [
      advisoryKey('', 'mutex', name).toString(),
    ]);
    const operator = harness.provider(keepalive);
    const lock = operator.createLock(name);
    const state = await lock.inspect();
    expect(state.holders).toEqual([
      {
        kind: 'mutex',
        fencingToken: undefined,
        permits: 1,
        owner: undefined,
        since: undefined,
        validUntil: Number.POSITIVE_INFINITY,
      },
    ]);
    const ended = new Promise((resolve) => other.once('error', resolve));
    expect(await lock.forceRelease()).toBe(1);
    await ended; // its session was terminated (after the grace)
    expect(await lock.inspect()).toMatchObject({ held: false, holders: [] });
  });

  for (const pooled of [false, true]) {
    it(`records any owner label exactly (NUL, quotes, lone surrogates), on the waiting path too (${pooled ? 'pg.Pool: inlined literals' : 'own sessions: prepared'})`, async () => {
      const owner = "o'wner\\ \u0000 \ud800 ✓";
      const name = uniqueName('owner');
      const pool = pooled ? new pg.Pool({ connectionString: url, max: 4 }) : undefined;
      onTestFinished(() => pool?.end());
      const holder = harness.provider(pool ? { owner, pool } : { owner });
      const blocker = await harness.provider().createLock(name).acquire();
      const waiting = holder.createLock(name).acquire({ timeout: 10_000 * timeScale });
      const observer = harness.provider();
      // The waiter waits server-side: pg_locks shows it.
      for (;;) {
        const state = await observer.createLock(name).inspect();
        if (state.waiting === 1) break;
      }
      await blocker.release();
      const handle = await waiting;
      const state = await observer.createLock(name).inspect();
      expect(state.holders.map((h) => [h.owner, h.fencingToken])).toEqual([
        [owner, handle.fencingToken],
      ]);
      await handle.release();
    });
  }

  it('forceRelease rejects with BackendUnavailableError when a row-less holder may not be terminated', async () => {
    const name = uniqueName('refused');
    const admin = await harness.client();
    await harness.provider().createLock(uniqueName('setup')).tryAcquire(); // table + sequence
    await admin.query(
      "DO $$ BEGIN CREATE ROLE lockkit_operator LOGIN PASSWORD 'operator'; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
    );
    await admin.query('GRANT SELECT ON lockkit_holds TO lockkit_operator');
    const other = await harness.client(); // a superuser session: the operator may not end it
    await other.query('SELECT pg_advisory_lock($1::bigint)', [
      advisoryKey('', 'mutex', name).toString(),
    ]);
    const login = new URL(url);
    login.username = 'lockkit_operator';
    login.password = 'operator';
    const operator = harness.provider({ ...keepalive, connection: login.toString() });
    const refused = operator.createLock(name).forceRelease();
    await expect(refused).rejects.toThrow(BackendUnavailableError);
    await expect(refused).rejects.toThrow(/terminate/);
    expect((await operator.createLock(name).inspect()).holders).toHaveLength(1);
  });

  it('holdsTable must be a lowercase identifier, owner a string (checked before any I/O)', () => {
    expect(() => harness.provider({ owner: 'me' })).not.toThrow();
    expect(() => harness.provider({ owner: 42 as unknown as string })).toThrow(
      InvalidArgumentError,
    );
    expect(() => harness.provider({ holdsTable: 'Bad Name' })).toThrow(InvalidArgumentError);
    expect(() => harness.provider({ holdsTable: 'x; DROP TABLE y' })).toThrow(InvalidArgumentError);
    expect(() => harness.provider({ holdsTable: 'app.lockkit_holds' })).not.toThrow();
  });

  for (const [label, options] of [
    [
      'the holds table missing',
      { createFencingSequence: false, holdsTable: 'lockkit_never_created' },
    ],
    ['recordHolds: false', { recordHolds: false }],
  ] as const) {
    it(`with ${label}, locks still work and inspect reads pg_locks`, async () => {
      await harness.provider().createLock(uniqueName('seq')).tryAcquire(); // the sequence exists
      const provider = harness.provider(options);
      const name = uniqueName('untracked');
      const handle = await provider.createLock(name).acquire();
      const state = await provider.createLock(name).inspect();
      expect(state.holders).toHaveLength(1);
      expect(state.holders[0]).toMatchObject({ owner: undefined, fencingToken: undefined });
      expect(await handle.release()).toBe(true);
    });
  }
});
