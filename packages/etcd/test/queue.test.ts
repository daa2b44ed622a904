import { LockLostError } from '@lockkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type EtcdLockProvider,
  kindOfKey,
  lockPrefix,
  permitsOfKey,
  prefixEnd,
} from '../src/index.js';
import { abortedWithin, etcdUrl, eventually, testProvider } from './support.js';

const providers: EtcdLockProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

/**
 * A provider whose safety poll never comes within a test (one minute): whatever it gets, it
 * gets from a watch event, so a missed or wrongly aimed watch makes the test time out.
 */
function provider(namespace = 'queue-test'): EtcdLockProvider {
  const created = testProvider(etcdUrl(), { namespace, pollIntervalMs: 60_000 });
  providers.push(created);
  return created;
}

interface QueueKey {
  readonly key: string;
  readonly lease: string;
  readonly createRevision: bigint;
  readonly value: string;
}

async function queueOf(
  observer: EtcdLockProvider,
  kind: 'mutex' | 'read' | 'semaphore',
  name: string,
): Promise<QueueKey[]> {
  const prefix = lockPrefix('/lockkit/', 'queue-test', kind, name);
  const response = await observer.client.kv.range({
    key: Buffer.from(prefix),
    range_end: prefixEnd(prefix),
    sort_target: 'Create',
    sort_order: 'Ascend',
  });
  return response.kvs.map((kv) => ({
    key: kv.key.toString(),
    lease: kv.lease,
    createRevision: BigInt(kv.create_revision),
    value: kv.value.toString(),
  }));
}

/** Resolves when `promise` settles, or with 'pending' after `ms`. */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}

describe('keys, leases and tokens', () => {
  it('a hold is one key on the provider’s lease; its create revision is the fencing token', async () => {
    const locks = provider();
    const first = await locks.createLock('one-lease-a').acquire();
    const second = await locks.createSemaphore('one-lease-b', 2).acquire();
    const [keyA] = await queueOf(locks, 'mutex', 'one-lease-a');
    const [keyB] = await queueOf(locks, 'semaphore', 'one-lease-b');
    expect(keyA!.key).toBe(locks.keyOf(first));
    expect(keyA!.createRevision).toBe(first.fencingToken);
    expect(keyB!.createRevision).toBe(second.fencingToken);
    // Many locks, one lease: the provider's session.
    expect(keyA!.lease).toBe(locks.leaseId);
    expect(keyB!.lease).toBe(locks.leaseId);
    expect(JSON.parse(keyA!.value)).toEqual({
      host: expect.any(String),
      pid: process.pid,
      owner: locks.owner,
      since: expect.any(Number),
    });
    await first.release();
    await second.release();
    expect(await queueOf(locks, 'mutex', 'one-lease-a')).toEqual([]);
  });

  it('a weighted permit request is one key tagged with its count, in queue order', async () => {
    const locks = provider();
    const prefix = lockPrefix('/lockkit/', 'queue-test', 'semaphore', 'weighted-keys');
    const semaphore = locks.createSemaphore('weighted-keys', 4);
    const two = await semaphore.acquire({ permits: 2 });
    const one = await semaphore.acquire();
    const keys = await queueOf(locks, 'semaphore', 'weighted-keys');
    expect(keys).toHaveLength(2);
    expect(keys[0]!.key.startsWith(`${prefix}permits-2.`)).toBe(true);
    expect(keys[1]!.key.startsWith(`${prefix}permit.`)).toBe(true);
    expect(keys.map((entry) => permitsOfKey(prefix, entry.key))).toEqual([2, 1]);
    expect(keys.map((entry) => kindOfKey(prefix, entry.key))).toEqual(['semaphore', 'semaphore']);
    expect(await semaphore.tryAcquire({ permits: 2 })).toBeNull(); // 3 taken of 4
    await two.release();
    await one.release();
    expect(await queueOf(locks, 'semaphore', 'weighted-keys')).toEqual([]);
  });

  it('waiters that gave up (timeout, abort, refused try) leave no key behind', async () => {
    const [holderSide, waiterSide] = [provider(), provider()];
    const held = await holderSide.createLock('gave-up').acquire();
    const lock = waiterSide.createLock('gave-up');
    expect(await lock.tryAcquire()).toBeNull();
    expect(await lock.tryAcquire({ timeout: 100 })).toBeNull();
    const controller = new AbortController();
    const aborted = lock.acquire({ signal: controller.signal }).catch((error: unknown) => error);
    await eventually(
      async () => (await queueOf(holderSide, 'mutex', 'gave-up')).length === 2,
      5000,
      'queued',
    );
    controller.abort(new Error('gave up'));
    expect(await aborted).toEqual(new Error('gave up'));
    // The wait ends at once; its key goes within a round trip.
    const onlyHolder = async (): Promise<boolean> => {
      const left = await queueOf(holderSide, 'mutex', 'gave-up');
      return left.length === 1 && left[0]!.key === holderSide.keyOf(held);
    };
    await eventually(onlyHolder, 500, 'only the holder’s key left');
    await held.release();
  });

  it('a key that is not lockkit’s under the queue prefix is ignored', async () => {
    const locks = provider();
    const prefix = lockPrefix('/lockkit/', 'queue-test', 'mutex', 'foreign');
    await locks.client.put(`${prefix}not-a-contender`).value('x');
    const handle = await locks.createLock('foreign').tryAcquire();
    expect(handle).not.toBeNull();
    await handle!.release();
    await locks.client.delete().key(`${prefix}not-a-contender`);
  });
});

describe('waiting is notified, one waiter at a time', () => {
  it('a mutex queue hands over in order, each waiter woken by its predecessor’s deletion', async () => {
    const locks = [provider(), provider(), provider(), provider()];
    const first = await locks[0]!.createLock('chain').acquire();
    const order: number[] = [];
    const handles: Promise<void>[] = [];
    for (const index of [1, 2, 3]) {
      handles.push(
        locks[index]!.createLock('chain')
          .acquire({ timeout: 10_000 })
          .then(async (handle) => {
            order.push(index);
            await handle.release();
          }),
      );
      // Enter the queue one after the other, so the order is known.
      const queued = async (): Promise<boolean> =>
        (await queueOf(locks[0]!, 'mutex', 'chain')).length === index + 1;
      await eventually(queued, 5000, `waiter ${index} queued`);
    }
    await first.release();
    await Promise.all(handles);
    expect(order).toEqual([1, 2, 3]);
  });

  it('semaphore: the waiter behind the first one moves up when the first is granted', async () => {
    const [a, b, c, d] = [provider(), provider(), provider(), provider()];
    // Two permits, both held; C is the first waiter (watches the queue), D watches C.
    const holderA = await a.createSemaphore('moves-up', 2).acquire();
    const holderB = await b.createSemaphore('moves-up', 2).acquire();
    const waitingC = c.createSemaphore('moves-up', 2).acquire({ timeout: 10_000 });
    await eventually(
      async () => (await queueOf(a, 'semaphore', 'moves-up')).length === 3,
      5000,
      'C queued',
    );
    const waitingD = d.createSemaphore('moves-up', 2).acquire({ timeout: 10_000 });
    await eventually(
      async () => (await queueOf(a, 'semaphore', 'moves-up')).length === 4,
      5000,
      'D queued',
    );
    await holderA.release();
    const handleC = await waitingC;
    // C marked its key when granted: D now watches the queue. B leaving frees D's permit.
    await holderB.release();
    const handleD = await settledWithin(waitingD, 3000);
    expect(handleD, 'D was not told that a permit became free').not.toBe('pending');
    await handleC.release();
    if (handleD !== 'pending') await handleD.release();
  });

  it('read-write: readers behind a waiting writer wake on that writer, then share the lock', async () => {
    const [reader, writer, late1, late2] = [provider(), provider(), provider(), provider()];
    const held = await reader.createReadWriteLock('rw-chain').acquireRead();
    const waitingWriter = writer.createReadWriteLock('rw-chain').acquireWrite({ timeout: 10_000 });
    await eventually(
      async () => (await queueOf(reader, 'read', 'rw-chain')).length === 2,
      5000,
      'writer queued',
    );
    const lateReaders = [late1, late2].map((locks) =>
      locks.createReadWriteLock('rw-chain').acquireRead({ timeout: 10_000 }),
    );
    await eventually(
      async () => (await queueOf(reader, 'read', 'rw-chain')).length === 4,
      5000,
      'readers queued',
    );
    expect(await settledWithin(Promise.race(lateReaders), 300)).toBe('pending');
    await held.release();
    const writing = await waitingWriter;
    expect(await settledWithin(Promise.race(lateReaders), 300)).toBe('pending');
    await writing.release();
    const readers = await Promise.all(lateReaders);
    for (const handle of readers) await handle.release();
  });
});

describe('the session', () => {
  it('a lease revoked on the server loses every hold of the provider; the next acquire gets a new lease', async () => {
    const locks = provider();
    const handles = await Promise.all([
      locks.createLock('session-a').acquire(),
      locks.createReadWriteLock('session-b').acquireWrite(),
    ]);
    const lease = locks.leaseId;
    await locks.expireSession();
    for (const handle of handles) {
      const reason = await abortedWithin(handle.signal, locks.capabilities.lostDetectionMs);
      expect(LockLostError.isInstance(reason)).toBe(true);
      expect(await handle.release()).toBe(false);
    }
    const again = await locks.createLock('session-a').acquire({ timeout: 5000 });
    expect(locks.leaseId).not.toBe(lease);
    expect(again.fencingToken).toBeGreaterThan(handles[0]!.fencingToken);
    await again.release();
  });

  it('a waiter whose key is deleted while it waits queues again and still gets the lock', async () => {
    const [holderSide, waiterSide] = [provider(), provider()];
    const held = await holderSide.createLock('requeue').acquire();
    const waiting = waiterSide.createLock('requeue').acquire({ timeout: 10_000 });
    await eventually(
      async () => (await queueOf(holderSide, 'mutex', 'requeue')).length === 2,
      5000,
      'queued',
    );
    const [, waiterKey] = await queueOf(holderSide, 'mutex', 'requeue');
    await holderSide.client.delete().key(waiterKey!.key);
    await held.release();
    const handle = await waiting;
    expect(handle.fencingToken).toBeGreaterThan(waiterKey!.createRevision);
    await handle.release();
  });
});
