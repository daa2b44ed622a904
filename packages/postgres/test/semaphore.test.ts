import { describe, expect, inject, it } from 'vitest';
import { advisoryKey, gateKey, slotKey } from '../src/index.js';
import {
  advisoryLocks,
  Harness,
  timeScale,
  uniqueApplication,
  uniqueName,
  waitFor,
} from './support.js';

const harness = new Harness(inject('lockkitServers').postgresUrl!);

describe('semaphore: N slot keys + LISTEN/NOTIFY', () => {
  it('each permit holds one distinct slot key (semaphore key XOR slot), no table involved', async () => {
    const name = uniqueName('slots');
    const provider = harness.provider();
    const admin = await harness.client();
    const permits = await Promise.all(
      Array.from({ length: 3 }, () => provider.createSemaphore(name, 3).acquire()),
    );
    const base = advisoryKey('', 'semaphore', name);
    const holders: number[] = [];
    for (let slot = 0; slot < 3; slot++) {
      const rows = await advisoryLocks(admin, slotKey(base, slot));
      expect(rows).toHaveLength(1);
      expect(rows[0]!.granted).toBe(true);
      holders.push(rows[0]!.pid);
    }
    expect(holders.sort()).toEqual(permits.map((permit) => provider.backendPidOf(permit)).sort());
    expect(await provider.createSemaphore(name, 3).tryAcquire()).toBeNull();
    for (const permit of permits) expect(await permit.release()).toBe(true);
    for (let slot = 0; slot < 3; slot++) {
      expect(await advisoryLocks(admin, slotKey(base, slot))).toEqual([]);
    }
  });

  it('a weighted grant holds n slot keys; a waiting one holds the gate, and gives it up with the wait', async () => {
    const name = uniqueName('weighted');
    const [p1, p2, p3] = [harness.provider(), harness.provider(), harness.provider()];
    const admin = await harness.client();
    const base = advisoryKey('', 'semaphore', name);
    const gate = gateKey(base);
    const three = await p1.createSemaphore(name, 4).acquire({ permits: 3 });
    const held = [];
    for (let slot = 0; slot < 4; slot++)
      held.push(...(await advisoryLocks(admin, slotKey(base, slot))));
    expect(held.map((row) => row.pid)).toEqual(Array(3).fill(p1.backendPidOf(three)));
    expect(await advisoryLocks(admin, gate)).toEqual([]); // granted at once: no gate kept
    const waiting = p2
      .createSemaphore(name, 4)
      .acquire({ permits: 2, timeout: 400 * timeScale })
      .catch((error: unknown) => error);
    await waitFor(async () => (await advisoryLocks(admin, gate)).length === 1, 5000, 'the gate');
    // One permit is free, yet a later one-permit request does not pass the waiting two.
    expect(await p3.createSemaphore(name, 4).tryAcquire()).toBeNull();
    expect((await waiting) as Error).toHaveProperty('name', 'LockTimeoutError');
    await waitFor(async () => (await advisoryLocks(admin, gate)).length === 0, 5000, 'no gate');
    const one = await p3.createSemaphore(name, 4).tryAcquire();
    expect(one).not.toBeNull();
    expect(await three.release()).toBe(true);
    for (let slot = 0; slot < 4; slot++) {
      const rows = await advisoryLocks(admin, slotKey(base, slot));
      expect(rows.every((row) => row.pid === p3.backendPidOf(one!))).toBe(true);
    }
    expect(await one!.release()).toBe(true);
  });

  it('one session holds several permits of one semaphore without stacking a slot', async () => {
    const name = uniqueName('one-session');
    const provider = harness.provider({ sharedConnections: 1 });
    const permits = [];
    for (let i = 0; i < 4; i++) permits.push(await provider.createSemaphore(name, 4).acquire());
    expect(new Set(permits.map((permit) => provider.backendPidOf(permit))).size).toBe(1);
    expect(await provider.createSemaphore(name, 4).tryAcquire()).toBeNull();
    expect(await harness.provider().createSemaphore(name, 4).tryAcquire()).toBeNull();
    await permits[0]!.release();
    const again = await harness.provider().createSemaphore(name, 4).tryAcquire();
    expect(again).not.toBeNull();
    await again?.release();
    for (const permit of permits.slice(1)) await permit.release();
  });

  it('a release wakes a waiter through NOTIFY, long before the safety poll', async () => {
    const name = uniqueName('notify');
    const holder = harness.provider();
    const waiter = harness.provider({ pollIntervalMs: 60_000 });
    const permit = await holder.createSemaphore(name, 1).acquire();
    const waiting = waiter
      .createSemaphore(name, 1)
      .acquire({ timeout: 20_000 })
      .then((handle) => ({ handle, at: performance.now() }));
    await new Promise((resolve) => setTimeout(resolve, 200)); // let it LISTEN
    const releasedAt = performance.now();
    await permit.release();
    const { handle, at } = await waiting;
    expect(at - releasedAt).toBeLessThan(1000 * timeScale);
    await handle.release();
  });

  it('a permit freed by a dead session (no NOTIFY) is found by the safety poll', async () => {
    const name = uniqueName('poll');
    const admin = await harness.client();
    const holder = harness.provider();
    const waiter = harness.provider({ pollIntervalMs: 100 });
    const permit = await holder.createSemaphore(name, 1).acquire();
    const waiting = waiter.createSemaphore(name, 1).acquire({ timeout: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await admin.query('SELECT pg_terminate_backend($1)', [holder.backendPidOf(permit)]);
    const handle = await waiting;
    expect(handle.fencingToken).toBeGreaterThan(permit.fencingToken);
    expect(await permit.release()).toBe(false);
    await handle.release();
  });

  it('a lost listening session is replaced: waiters are woken and keep getting NOTIFYs', async () => {
    const name = uniqueName('relisten');
    const application = uniqueApplication();
    const admin = await harness.client();
    const holder = harness.provider();
    const waiter = harness.provider({ applicationName: application, pollIntervalMs: 60_000 });
    const first = await holder.createSemaphore(name, 1).acquire();
    const waiting = waiter.createSemaphore(name, 1).acquire({ timeout: 20_000 });
    waiting.catch(() => {}); // (awaited below; keeps a failed assertion from cascading)
    const listeners = async (): Promise<number[]> =>
      (
        await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
          [application],
        )
      ).rows.map((row) => row.pid);
    await waitFor(async () => (await listeners()).length === 1, 5000, 'the listener');
    const [old] = await listeners();
    await admin.query('SELECT pg_terminate_backend($1)', [old]);
    await waitFor(
      async () => (await listeners()).some((pid) => pid !== old),
      5000,
      'a new listening session',
    );
    const releasedAt = performance.now();
    await first.release();
    const handle = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(2000 * timeScale); // NOTIFY, not the 60 s poll
    await handle.release();
  });
});
