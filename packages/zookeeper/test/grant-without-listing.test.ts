import type { LockHandle } from '@lockkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZooKeeperLockProvider } from '../src/index.js';
import type { ZooKeeperClient } from '../src/zookeeper-client.js';
import { ReplyProxy } from './reply-proxy.js';
import { eventually, RawZooKeeper, testProvider, zookeeperUrl } from './support.js';

// A waiter whose only obstacle was the node it watches is granted when that node's deletion
// is reported, without listing the queue again (nodes only ever join behind it) — unless its
// own node may be gone too, or the report may be out of order (after a reconnect).

const url = zookeeperUrl();
const closing: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const resource of closing.reverse()) await resource.close();
});

function provider(): ZooKeeperLockProvider {
  const created = testProvider(url);
  closing.push(created);
  return created;
}

/**
 * A provider on its own client, with the paths it lists (when asked) and the paths it has
 * read with a watch (when the reply came: the watch is set).
 */
async function recordingProvider(address = url): Promise<{
  locks: ZooKeeperLockProvider;
  raw: RawZooKeeper;
  listed: string[];
  watched: string[];
}> {
  const raw = await RawZooKeeper.connect(address);
  const listed: string[] = [];
  const watched: string[] = [];
  const client: ZooKeeperClient = raw.client;
  const { getChildren, getData } = client;
  client.getChildren = (path, ...rest) => {
    listed.push(path);
    getChildren.call(client, path, ...rest);
  };
  client.getData = (path, watcher, callback) => {
    getData.call(client, path, watcher, (error, ...reply) => {
      if (!error && watcher) watched.push(path);
      callback(error, ...reply);
    });
  };
  const locks = testProvider(url, { connectionString: undefined, client });
  closing.push(raw, locks);
  return { locks, raw, listed, watched };
}

type Kind = 'mutex' | 'write' | 'read';

function take(locks: ZooKeeperLockProvider, kind: Kind, name: string, signal?: AbortSignal) {
  const options = { timeout: 10_000, signal };
  if (kind === 'mutex') return locks.createLock(name).acquire(options);
  const rw = locks.createReadWriteLock(name);
  return kind === 'write' ? rw.acquireWrite(options) : rw.acquireRead(options);
}

const parentOf = (locks: ZooKeeperLockProvider, handle: LockHandle): string =>
  locks.nodePathOf(handle).replace(/\/[^/]+$/, '');

describe('a hand-off without a listing', () => {
  it.each([
    ['mutex', 'mutex'],
    ['write', 'write'],
    ['write', 'read'],
  ] as const)(
    '%s held, %s waiting directly behind: granted on the deletion, queue listed once',
    async (first, second) => {
      const name = `skip-${first}-${second}-${Math.random()}`;
      const holder = await take(provider(), first, name);
      const waiter = await recordingProvider();
      const parent = parentOf(provider(), holder);
      const holderPath = provider().nodePathOf(holder);
      const waiting = take(waiter.locks, second, name);
      await eventually(
        () => waiter.watched.includes(holderPath),
        5000,
        'the waiter watches the holder',
      );
      await holder.release();
      const handle = await waiting;
      expect(waiter.listed.filter((path) => path === parent)).toHaveLength(1);
      expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
      expect(handle.signal.aborted).toBe(false);
      expect(await waiter.raw.exists(waiter.locks.nodePathOf(handle))).not.toBeNull();
      await handle.release();
    },
  );

  it.each([
    ['mutex', ['mutex', 'mutex', 'mutex']],
    ['write', ['write', 'write', 'write']],
    ['read', ['write', 'write', 'read']],
  ] as const)(
    '%s: a waiter ahead gives up while the holder holds: the one behind waits on',
    async (_label, kinds) => {
      const name = `skip-withdraw-${Math.random()}`;
      const [holderKind, quitterKind, patientKind] = kinds;
      const holderLocks = provider();
      const holder = await take(holderLocks, holderKind, name);
      const holderPath = holderLocks.nodePathOf(holder);
      const patient = await recordingProvider();
      const quit = new AbortController();
      const quitting = take(provider(), quitterKind, name, quit.signal);
      await eventually(
        async () => (await patient.raw.children(parentOf(holderLocks, holder)))?.length === 2,
        5000,
        'quitter queued',
      );
      const waiting = take(patient.locks, patientKind, name);
      const state = { done: false };
      void waiting.then(
        () => (state.done = true),
        () => (state.done = true),
      );
      await eventually(() => patient.watched.length === 1, 5000, 'the patient watches the quitter');
      quit.abort(new Error('changed my mind'));
      await expect(quitting).rejects.toThrow('changed my mind');
      // It was woken by the quitter's deletion and now watches the holder: not granted.
      await eventually(
        () => patient.watched.includes(holderPath),
        5000,
        'the patient watches the holder',
      );
      expect(state.done).toBe(false);
      await holder.release();
      const handle = await waiting;
      expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
      await handle.release();
    },
  );

  it('third in the queue: lists again while the second holds, then is granted without a listing', async () => {
    const name = `skip-third-${Math.random()}`;
    const holderLocks = provider();
    const holder = await holderLocks.createLock(name).acquire();
    const second = await recordingProvider();
    const third = await recordingProvider();
    const secondWaiting = second.locks.createLock(name).acquire({ timeout: 10_000 });
    await eventually(() => second.watched.length === 1, 5000, 'the second watches the holder');
    const thirdWaiting = third.locks.createLock(name).acquire({ timeout: 10_000 });
    await eventually(() => third.watched.length === 1, 5000, 'the third watches the second');
    await holder.release();
    const secondHandle = await secondWaiting;
    // Told of the holder's release (its 'ahead' watch), the third lists while the second holds.
    await eventually(() => third.listed.length === 2, 5000, 'the third lists again');
    await secondHandle.release();
    const thirdHandle = await thirdWaiting;
    expect(third.listed).toHaveLength(2);
    expect(second.listed).toHaveLength(1);
    expect(thirdHandle.fencingToken).toBeGreaterThan(secondHandle.fencingToken);
    await thirdHandle.release();
  });

  it('our node deleted together with the holder’s: not granted on it; starts over and holds a node that exists', async () => {
    const name = `skip-own-gone-${Math.random()}`;
    const holderLocks = provider();
    const holder = await holderLocks.createLock(name).acquire();
    const holderPath = holderLocks.nodePathOf(holder);
    const waiter = await recordingProvider();
    const waiting = waiter.locks.createLock(name).acquire({ timeout: 10_000 });
    await eventually(
      () => waiter.watched.includes(holderPath),
      5000,
      'the waiter watches the holder',
    );
    const parent = parentOf(holderLocks, holder);
    const children = (await waiter.raw.children(parent)) ?? [];
    const ownPath = `${parent}/${children.find((child) => !holderPath.endsWith(child))}`;
    await waiter.raw.removeTogether([ownPath, holderPath]); // ours first: reported first
    const handle = await waiting;
    const path = waiter.locks.nodePathOf(handle);
    expect(path).not.toBe(ownPath);
    expect(await waiter.raw.exists(path)).not.toBeNull();
    expect(handle.signal.aborted).toBe(false);
    expect(await handle.release()).toBe(true);
  });

  it('after a reconnect while waiting, the queue is listed before the grant', async () => {
    const proxy = await ReplyProxy.start(url);
    closing.push(proxy);
    const name = `skip-reconnect-${Math.random()}`;
    const holderLocks = provider();
    const holder = await holderLocks.createLock(name).acquire();
    const holderPath = holderLocks.nodePathOf(holder);
    const waiter = await recordingProvider(proxy.url);
    const waiting = waiter.locks.createLock(name).acquire({ timeout: 10_000 });
    await eventually(
      () => waiter.watched.includes(holderPath),
      5000,
      'the waiter watches the holder',
    );
    const reconnected = new Promise((resolve) => waiter.raw.client.on('connected', resolve));
    proxy.dropHeldAndDisconnect();
    await reconnected;
    await holder.release();
    const handle = await waiting;
    expect(waiter.listed.filter((path) => path === parentOf(holderLocks, holder))).toHaveLength(2);
    expect(await waiter.raw.exists(waiter.locks.nodePathOf(handle))).not.toBeNull();
    await handle.release();
  });
});
