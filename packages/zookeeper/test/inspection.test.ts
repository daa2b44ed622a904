import { randomUUID } from 'node:crypto';
import { abortedWithin } from '@lockkit/conformance';
import { LockLostError } from '@lockkit/core';
import { readableKey } from '@lockkit/core/backend';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZooKeeperLockProvider } from '../src/index.js';
import { zookeeperModule } from '../src/zookeeper-client.js';
import { eventually, RawZooKeeper, testProvider, zookeeperUrl } from './support.js';

const url = zookeeperUrl();
const providers: ZooKeeperLockProvider[] = [];
const provider = (owner?: string): ZooKeeperLockProvider => {
  const created = testProvider(url, { namespace: 'inspect-test', owner });
  providers.push(created);
  return created;
};
const raw = await RawZooKeeper.connect(url);
afterAll(async () => {
  await Promise.all(providers.map((created) => created.close()));
  await raw.close();
});

function dataOf(path: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) =>
    raw.client.getData(path, undefined, (error, data) =>
      error ? reject(error) : resolve(JSON.parse(data!.toString()) as Record<string, unknown>),
    ),
  );
}

describe('inspection on ZooKeeper', () => {
  it('the node records owner and since at its create; a semaphore grant mark keeps them', async () => {
    const [first, second, third] = [provider('one ✓'), provider('two'), provider('three')];
    const before = Date.now();
    const held = await first.createSemaphore('marked', 1).acquire();
    expect(await dataOf(first.nodePathOf(held))).toEqual({
      owner: 'one ✓',
      since: expect.any(Number),
    });
    const secondWaits = second.createSemaphore('marked', 1).acquire({ timeout: 10_000 });
    const queuedTwo = async (): Promise<boolean> =>
      (await first.createSemaphore('marked', 1).inspect()).waiting === 1;
    await eventually(queuedTwo, 5000, 'the second contender in the queue');
    const thirdWaits = third.createSemaphore('marked', 1).acquire({ timeout: 10_000 });
    const queuedThree = async (): Promise<boolean> =>
      (await first.createSemaphore('marked', 1).inspect()).waiting === 2;
    await eventually(queuedThree, 5000, 'the third contender in the queue');
    await held.release();
    const granted = await secondWaits;
    // Granted with a waiter behind it: its node is marked, and the mark keeps the record.
    const marked = async (): Promise<boolean> =>
      (await dataOf(second.nodePathOf(granted)))['granted'] === true;
    await eventually(marked, 5000, 'the grant mark');
    const state = await first.createSemaphore('marked', 1).inspect();
    expect(state.holders).toHaveLength(1);
    expect(state.holders[0]).toMatchObject({ owner: 'two', fencingToken: granted.fencingToken });
    expect(state.holders[0]!.since).toBeGreaterThanOrEqual(before);
    expect(state.waiting).toBe(1);
    await granted.release();
    await (await thirdWaits).release();
  });

  it('a node of an older client (no data) is reported, and forceRelease deletes it', async () => {
    const locks = provider();
    const parent = `/lockkit/${readableKey('inspect-test', 'mutex', 'older-client', { maxLength: 200 })}`;
    await raw.create(parent);
    const path = await new Promise<string>((resolve, reject) =>
      raw.client.create(
        `${parent}/lock-${randomUUID()}-`,
        undefined,
        zookeeperModule().ACL.OPEN_ACL_UNSAFE,
        3, // ephemeral sequential
        (error, created) => (error ? reject(error) : resolve(created)),
      ),
    );
    const czxid = (await raw.exists(path))!.czxid.readBigInt64BE(0);
    const lock = locks.createLock('older-client');
    expect((await lock.inspect()).holders).toEqual([
      {
        kind: 'mutex',
        fencingToken: czxid,
        permits: 1,
        owner: undefined,
        since: undefined,
        validUntil: Number.POSITIVE_INFINITY,
      },
    ]);
    expect(await lock.forceRelease()).toBe(1);
    expect(await raw.exists(path)).toBeNull();
    const next = await lock.acquire({ timeout: 2000 });
    expect(next.fencingToken).toBeGreaterThan(czxid);
    await next.release();
  });

  it('forceRelease breaks only that lock: other locks on the same session stay held', async () => {
    const locks = provider();
    const broken = await locks.createLock('broken').acquire();
    const kept = await locks.createReadWriteLock('kept').acquireRead();
    expect(await locks.createLock('broken').forceRelease()).toBe(1);
    expect(LockLostError.isInstance(await abortedWithin(broken.signal, 3000))).toBe(true);
    expect(kept.signal.aborted).toBe(false);
    const state = await locks.createReadWriteLock('kept').inspect();
    expect(state.holders.map((hold) => hold.fencingToken)).toEqual([kept.fencingToken]);
    expect(await kept.release()).toBe(true);
    expect(await broken.release()).toBe(false);
  });
});
