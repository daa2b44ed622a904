import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { mutexKey } from '../src/index.js';
import { adminQuery, holderOf, ms, mysqlUrl, provider, uniqueName } from './support.js';

describe('multiplexing and injected pools', () => {
  it('holds 10 000 locks over at most 10 sessions (counted in PROCESSLIST)', async () => {
    // A tight keepalive (taking or releasing 10 000 locks lasts several times its timeout):
    // answers to the queued statements must count as signs of life.
    const locks = provider({
      sharedConnections: 4,
      keepaliveIntervalMs: 100,
      keepaliveTimeoutMs: ms(1000),
    });
    const prefix = uniqueName('many');
    const handles = [];
    for (let batch = 0; batch < 100; batch++) {
      handles.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            locks.createLock(`${prefix}:${batch * 100 + i}`).acquire({ timeout: ms(10_000) }),
          ),
        )),
      );
    }
    expect(handles).toHaveLength(10_000);
    const ids = new Set(handles.map((handle) => locks.connectionIdOf(handle)));
    const sessions = await adminQuery<{ n: number }[]>(
      `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID IN (${[...locks.connectionIds].join(',')})`,
    );
    expect(Number(sessions[0]?.n)).toBeLessThanOrEqual(10);
    expect(ids.size).toBeLessThanOrEqual(10);
    // Spot-check that the server agrees who holds what.
    for (const index of [0, 4999, 9999]) {
      expect(await holderOf(mutexKey('', `${prefix}:${index}`))).toBe(
        locks.connectionIdOf(handles[index]!),
      );
    }
    expect(handles.some((handle) => handle.signal.aborted)).toBe(false);
    const released = await Promise.all(handles.map((handle) => handle.release()));
    expect(released.every(Boolean)).toBe(true); // false for any handle reported lost
    expect(await holderOf(mutexKey('', `${prefix}:9999`))).toBeNull();
  }, 120_000);

  it('spreads locks taken one at a time: a shared session takes 500 before the next is used', async () => {
    const locks = provider({ sharedConnections: 3 });
    const prefix = uniqueName('spread');
    const handles = [];
    for (let index = 0; index < 1800; index++) {
      const handle = await locks.createLock(`${prefix}:${index}`).tryAcquire();
      if (handle) handles.push(handle);
    }
    expect(handles).toHaveLength(1800);
    const perSession = new Map<number, number>();
    for (const handle of handles) {
      const id = locks.connectionIdOf(handle);
      perSession.set(id, (perSession.get(id) ?? 0) + 1);
    }
    // 500 on each of the three, then the rest where fewest are held.
    expect([...perSession.values()].sort((a, b) => a - b)).toEqual([600, 600, 600]);
    expect(locks.connectionIds.length).toBe(3);
    await Promise.all(handles.map((handle) => handle.release()));
  }, 60_000);

  it('borrows from an injected pool, gives the sessions back clean, and never ends it', async () => {
    const pool = mysql.createPool({ uri: mysqlUrl(), connectionLimit: 8 });
    try {
      const locks = provider({ pool, sharedConnections: 2 });
      const name = uniqueName('pool');
      const holder = await locks.createLock(name).acquire();
      const waiting = locks.createLock(name).acquire({ timeout: ms(5000) });
      await holder.release();
      const second = await waiting;
      expect(second.fencingToken).toBeGreaterThan(holder.fencingToken);
      await second.release();
      await locks.close();
      // The pool still works, and its sessions carry no user locks or changed timeouts.
      const sessions = await Promise.all(Array.from({ length: 8 }, () => pool.getConnection()));
      try {
        for (const session of sessions) {
          const [rows] = await session.query(
            'SELECT @@SESSION.wait_timeout = @@GLOBAL.wait_timeout AS same, IS_USED_LOCK(?) AS held',
            [mutexKey('', name)],
          );
          expect(rows).toEqual([{ same: 1, held: null }]);
        }
      } finally {
        for (const session of sessions) session.release();
      }
    } finally {
      await pool.end();
    }
  });
});
