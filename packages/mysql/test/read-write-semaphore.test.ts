import { describe, expect, it } from 'vitest';
import { lockKeys } from '../src/index.js';
import { holderOf, ms, provider, releaseAll, uniqueName } from './support.js';

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
