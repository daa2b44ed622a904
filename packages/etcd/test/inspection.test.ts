import { LockLostError } from '@lockkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { contenderKey, type EtcdLockProvider, lockPrefix } from '../src/index.js';
import { abortedWithin, etcdUrl, eventually, testProvider } from './support.js';

const providers: EtcdLockProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function provider(owner?: string): EtcdLockProvider {
  const created = testProvider(etcdUrl(), { namespace: 'inspect-test', owner });
  providers.push(created);
  return created;
}

async function recordOf(locks: EtcdLockProvider, key: string): Promise<Record<string, unknown>> {
  const response = await locks.client.kv.range({ key: Buffer.from(key) });
  return JSON.parse(response.kvs[0]!.value.toString()) as Record<string, unknown>;
}

describe('inspection on etcd', () => {
  it('a hold that waited reports when it entered the queue; the semaphore grant mark keeps the record', async () => {
    const [first, second, third] = [provider('one ✓'), provider('two'), provider('three')];
    const semaphore = (locks: EtcdLockProvider) => locks.createSemaphore('marked', 1);
    const held = await semaphore(first).acquire();
    expect(await recordOf(first, first.keyOf(held))).toMatchObject({ owner: 'one ✓' });
    const enteredAt = Date.now();
    const secondWaits = semaphore(second).acquire({ timeout: 10_000 });
    const queued = (count: number) => async (): Promise<boolean> =>
      (await semaphore(first).inspect()).waiting === count;
    await eventually(queued(1), 5000, 'the second contender in the queue');
    const thirdWaits = semaphore(third).acquire({ timeout: 10_000 });
    await eventually(queued(2), 5000, 'the third contender in the queue');
    const releasedAt = Date.now();
    await held.release();
    const granted = await secondWaits;
    // Granted with a waiter behind it: the key is written again (the grant mark), same record.
    const key = second.keyOf(granted);
    const marked = async (): Promise<boolean> => {
      const response = await second.client.kv.range({ key: Buffer.from(key) });
      return response.kvs[0]!.version !== '1';
    };
    await eventually(marked, 5000, 'the grant mark');
    const [hold] = (await semaphore(first).inspect()).holders;
    expect(hold).toMatchObject({ owner: 'two', fencingToken: granted.fencingToken });
    expect(hold!.since).toBeGreaterThanOrEqual(enteredAt - 1);
    expect(hold!.since).toBeLessThanOrEqual(releasedAt);
    await granted.release();
    await (await thirdWaits).release();
  });

  it('a key of an older client (no owner, no since) is reported, and forceRelease removes it', async () => {
    const locks = provider();
    const prefix = lockPrefix('/lockkit/', 'inspect-test', 'mutex', 'older-client');
    const key = contenderKey(prefix, 'mutex');
    const lease = locks.client.lease(5, { autoKeepAlive: false });
    await lease.put(key).value(JSON.stringify({ host: 'old-host', pid: 1 }));
    const read = await locks.client.kv.range({ key: Buffer.from(key) });
    const createRevision = BigInt(read.kvs[0]!.create_revision);
    const lock = locks.createLock('older-client');
    const state = await lock.inspect();
    expect(state.holders).toEqual([
      {
        kind: 'mutex',
        fencingToken: createRevision,
        permits: 1,
        owner: undefined,
        since: undefined,
        validUntil: Number.POSITIVE_INFINITY,
      },
    ]);
    expect(await lock.forceRelease()).toBe(1);
    expect((await lock.inspect()).held).toBe(false);
    const next = await lock.acquire({ timeout: 2000 });
    expect(next.fencingToken).toBeGreaterThan(createRevision);
    await next.release();
    await lease.revoke();
  });

  it('forceRelease breaks only that lock: other locks on the same lease stay held', async () => {
    const locks = provider();
    const broken = await locks.createLock('broken').acquire();
    const kept = await locks.createReadWriteLock('kept').acquireRead();
    expect(await locks.createLock('broken').forceRelease()).toBe(1);
    expect(LockLostError.isInstance(await abortedWithin(broken.signal, 3000))).toBe(true);
    expect(kept.signal.aborted).toBe(false);
    const state = await locks.createReadWriteLock('kept').inspect();
    expect(state.holders.map((hold) => hold.fencingToken)).toEqual([kept.fencingToken]);
    expect(await kept.release()).toBe(true);
  });
});
