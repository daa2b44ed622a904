import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { lockKeys } from '../src/index.js';
import {
  eventually,
  holderOf,
  killConnection,
  ms,
  mysqlUrl,
  provider,
  releaseAll,
  uniqueName,
} from './support.js';

describe('semaphore on permit locks', () => {
  it('a release wakes the head waiter at once (KILL QUERY ID), not at its safety poll', async () => {
    const name = uniqueName('wake');
    const owners = provider();
    const waiter = provider({ safetyPollMs: 10_000 });
    const held = [
      await owners.createSemaphore(name, 2).acquire(),
      await owners.createSemaphore(name, 2).acquire(),
    ];
    // Alternate which permit is released: the head blocks on one of them at random, so
    // some rounds can only finish through the wake-up of a releaser of the other one.
    for (let round = 0; round < 6; round++) {
      const waiting = waiter.createSemaphore(name, 2).acquire({ timeout: ms(8000) });
      await new Promise((resolve) => setTimeout(resolve, ms(150)));
      const releasedAt = performance.now();
      const index = round % 2;
      await held[index]!.release();
      const next = await waiting;
      expect(performance.now() - releasedAt).toBeLessThan(ms(150));
      await next.release();
      held[index] = await owners.createSemaphore(name, 2).acquire({ timeout: ms(5000) });
    }
    await releaseAll(held);
  }, 30_000);

  it('a weighted grant holds n permit locks; a waiting one holds the gate until its session dies', async () => {
    const name = uniqueName('weighted');
    const keys = lockKeys({ name, namespace: '', kind: 'semaphore', maxCount: 4 });
    const [p1, p2, p3] = [provider(), provider(), provider()];
    const three = await p1.createSemaphore(name, 4).acquire({ permits: 3 });
    const holder = p1.connectionIdOf(three);
    for (let i = 0; i < 3; i++) expect(await holderOf(keys.slot(i))).toBe(holder);
    expect(await holderOf(keys.slot(3))).toBeNull();
    expect(await holderOf(keys.gate)).toBeNull(); // granted at once: no gate kept
    const waiting = p2.createSemaphore(name, 4).acquire({ permits: 2, timeout: ms(20_000) });
    await eventually(async () => (await holderOf(keys.gate)) !== null, ms(5000), 'the gate');
    // One permit is free, yet a later one-permit request does not pass the waiting two.
    expect(await p3.createSemaphore(name, 4).tryAcquire()).toBeNull();
    // The waiter's session dies: the server frees its gate (and whatever it collected).
    const gateHolder = (await holderOf(keys.gate))!;
    const failed = waiting.catch((error: unknown) => error);
    await killConnection(gateHolder);
    await eventually(async () => (await holderOf(keys.gate)) !== gateHolder, ms(5000), 'freed');
    expect(await three.release()).toBe(true);
    for (let i = 0; i < 3; i++) expect(await holderOf(keys.slot(i))).not.toBe(holder);
    const two = await failed; // a retried wait on a new session, or the error of the lost one
    if (two && typeof two === 'object' && 'release' in two) {
      expect(await (two as { release(): Promise<boolean> }).release()).toBe(true);
    }
    const one = await p3.createSemaphore(name, 4).acquire({ timeout: ms(5000) });
    expect(await one.release()).toBe(true);
  }, 30_000);

  it("no attempt takes a permit while the gate is held (a waiting weighted request's)", async () => {
    const name = uniqueName('gate');
    const keys = lockKeys({ name, namespace: '', kind: 'semaphore', maxCount: 3 });
    const locks = provider();
    const head = await mysql.createConnection(mysqlUrl());
    try {
      await head.query('DO GET_LOCK(?, 0)', [keys.gate]); // what a waiting weighted head holds
      expect(await locks.createSemaphore(name, 3).tryAcquire()).toBeNull(); // 3 permits free
      expect(await locks.createSemaphore(name, 3).tryAcquire({ permits: 2 })).toBeNull();
      await head.query('DO RELEASE_LOCK(?)', [keys.gate]);
      const one = await locks.createSemaphore(name, 3).tryAcquire();
      const two = await locks.createSemaphore(name, 3).tryAcquire({ permits: 2 });
      expect([one, two]).not.toContain(null);
      await releaseAll([one, two]);
    } finally {
      await head.end();
    }
  });

  it('takes the lowest free permits, so a huge maxCount costs one statement', async () => {
    const name = uniqueName('packed');
    const keys = lockKeys({ name, namespace: '', kind: 'semaphore', maxCount: 2 ** 31 - 1 });
    const locks = provider();
    const handles = [];
    for (let i = 0; i < 3; i++)
      handles.push(await locks.createSemaphore(name, 2 ** 31 - 1).acquire());
    for (let i = 0; i < 3; i++) {
      expect(await holderOf(keys.slot(i))).toBe(locks.connectionIdOf(handles[i]!));
    }
    await handles[1]!.release();
    const again = await locks.createSemaphore(name, 2 ** 31 - 1).acquire();
    expect(await holderOf(keys.slot(1))).toBe(locks.connectionIdOf(again));
    await releaseAll([handles[0]!, handles[2]!, again]);
  });
});

describe('read-write lock on a gate and reader slots', () => {
  it('more readers than maxReaders wait for a slot, notified, and the writer still waits for all', async () => {
    const name = uniqueName('slots');
    const readers = provider({ maxReaders: 2 });
    const first = await readers.createReadWriteLock(name).acquireRead();
    const second = await readers.createReadWriteLock(name).acquireRead();
    expect(await readers.createReadWriteLock(name).tryAcquireRead()).toBeNull();
    const third = readers.createReadWriteLock(name).acquireRead({ timeout: ms(5000) });
    await new Promise((resolve) => setTimeout(resolve, ms(150)));
    const releasedAt = performance.now();
    await first.release();
    const thirdHandle = await third;
    expect(performance.now() - releasedAt).toBeLessThan(ms(150));
    const writers = provider({ maxReaders: 2 });
    expect(await writers.createReadWriteLock(name).tryAcquireWrite()).toBeNull();
    const writer = writers.createReadWriteLock(name).acquireWrite({ timeout: ms(5000) });
    await second.release();
    expect(await writers.createReadWriteLock(name).tryAcquireRead()).toBeNull();
    await thirdHandle.release();
    const writerHandle = await writer;
    const keys = lockKeys({ name, namespace: '', kind: 'write', maxCount: 1 });
    expect(await holderOf(keys.gate)).toBe(writers.connectionIdOf(writerHandle));
    expect(await holderOf(keys.slot(0))).toBeNull();
    expect(await holderOf(keys.slot(1))).toBeNull();
    await writerHandle.release();
  });

  it('readers hold only their slot (the gate is free between acquisitions)', async () => {
    const name = uniqueName('gate');
    const keys = lockKeys({ name, namespace: '', kind: 'read', maxCount: 1 });
    const locks = provider();
    const reader = await locks.createReadWriteLock(name).acquireRead();
    expect(await holderOf(keys.gate)).toBeNull();
    expect(await holderOf(keys.slot(0))).toBe(locks.connectionIdOf(reader));
    await reader.release();
    expect(await holderOf(keys.slot(0))).toBeNull();
  });
});
