import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { LockHandle } from '@lockkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type WatchNotification,
  type ZooKeeperLockProvider,
  zookeeperChannelNames,
} from '../src/index.js';
import { eventually, RawZooKeeper, testProvider, zookeeperUrl } from './support.js';

const url = zookeeperUrl();
const providers: ZooKeeperLockProvider[] = [];
const provider = (): ZooKeeperLockProvider => {
  const created = testProvider(url);
  providers.push(created);
  return created;
};
afterAll(async () => {
  await Promise.all(providers.map((created) => created.close()));
});

/** Collects this package's watch notifications for paths under `parent`. */
function watchLog(parent: string): { readonly events: WatchNotification[]; stop(): void } {
  const events: WatchNotification[] = [];
  const listener = (message: unknown): void => {
    const event = message as WatchNotification;
    if (event.path.startsWith(`${parent}/`) || event.path === parent) events.push(event);
  };
  subscribe(zookeeperChannelNames.watch, listener);
  return { events, stop: () => unsubscribe(zookeeperChannelNames.watch, listener) };
}

const isAhead = (event: WatchNotification): boolean => event.purpose === 'ahead';

function settled(promise: Promise<unknown>): { readonly done: boolean } {
  const state = { done: false };
  promise.then(
    () => {
      state.done = true;
    },
    () => {
      state.done = true;
    },
  );
  return state;
}

describe('waiting in the ZooKeeper queue', () => {
  it('50 waiters: each release wakes one waiter (and tells one more), in FIFO order', async () => {
    const clients = [provider(), provider(), provider(), provider(), provider()];
    const name = `herd-${Math.random()}`;
    const holder = await clients[0]!.createLock(name).acquire();
    const parent = clients[0]!.nodePathOf(holder).replace(/\/[^/]+$/, '');
    const raw = await RawZooKeeper.connect(url);
    const order: number[] = [];
    const waiters: Promise<LockHandle>[] = [];
    for (let i = 0; i < 50; i++) {
      const waiting = clients[i % clients.length]!.createLock(name)
        .acquire({ timeout: 60_000 })
        .then(async (handle) => {
          order.push(i);
          await handle.release();
          return handle;
        });
      waiters.push(waiting);
      // Enqueue one at a time so the arrival order is known.
      await eventually(async () => (await raw.children(parent))?.length === i + 2, 5000, 'enqueue');
    }
    const log = watchLog(parent);
    try {
      await holder.release();
      const handles = await Promise.all(waiters);
      expect(order).toEqual([...Array(50).keys()]);
      const wakeups = log.events.filter((event) => event.purpose === 'predecessor');
      expect(wakeups).toHaveLength(50); // one per release: no herd
      expect(new Set(wakeups.map((event) => event.path)).size).toBe(50);
      // The contender two behind a released node watches it too ('ahead'), so that it can
      // list the queue while the next one holds, and take its own grant without a listing.
      const others = log.events.filter((event) => event.purpose !== 'own-node');
      expect(others.filter((event) => event.purpose !== 'predecessor').every(isAhead)).toBe(true);
      const perPath = new Map<string, number>();
      for (const { path } of others) perPath.set(path, (perPath.get(path) ?? 0) + 1);
      expect(Math.max(...perPath.values())).toBe(2); // no herd: at most two per release
      for (let i = 1; i < handles.length; i++) {
        expect(handles[i]!.fencingToken).toBeGreaterThan(handles[i - 1]!.fencingToken);
      }
    } finally {
      log.stop();
      await raw.close();
    }
  }, 60_000);

  it('semaphore: a release grants the oldest waiter only, and wakes O(1) waiters', async () => {
    const [a, b] = [provider(), provider()];
    const name = `sem-fifo-${Math.random()}`;
    const holders = [
      await a.createSemaphore(name, 2).acquire(),
      await a.createSemaphore(name, 2).acquire(),
    ];
    const parent = a.nodePathOf(holders[0]!).replace(/\/[^/]+$/, '');
    const raw = await RawZooKeeper.connect(url);
    const waiters: Promise<LockHandle>[] = [];
    for (let i = 0; i < 10; i++) {
      waiters.push(b.createSemaphore(name, 2).acquire({ timeout: 30_000 }));
      await eventually(async () => (await raw.children(parent))?.length === i + 3, 5000, 'enqueue');
    }
    const log = watchLog(parent);
    try {
      const states = waiters.map(settled);
      for (let k = 0; k < 10; k++) {
        await holders.shift()!.release();
        holders.push(await waiters[k]!);
        // the next waiter is still queued: exactly one permit moved, to the oldest waiter
        if (k + 1 < 10) expect(states[k + 1]!.done).toBe(false);
      }
      // 10 releases; a herd would be ~10 wake-ups per release.
      const wakeups = log.events.filter((event) => event.purpose !== 'own-node');
      expect(wakeups.length).toBeLessThanOrEqual(2 * 10 + 2);
      for (const handle of holders) await handle.release();
    } finally {
      log.stop();
      await raw.close();
    }
  });

  it('a waiter that gives up deletes its node, and the queue behind it moves up', async () => {
    const [a, b, c] = [provider(), provider(), provider()];
    const name = `withdraw-${Math.random()}`;
    const holder = await a.createLock(name).acquire();
    const parent = a.nodePathOf(holder).replace(/\/[^/]+$/, '');
    const raw = await RawZooKeeper.connect(url);
    try {
      const controller = new AbortController();
      const quitter = b.createLock(name).acquire({ signal: controller.signal });
      await eventually(async () => (await raw.children(parent))?.length === 2, 5000, 'quitter');
      const patient = c.createLock(name).acquire({ timeout: 10_000 });
      await eventually(async () => (await raw.children(parent))?.length === 3, 5000, 'patient');
      controller.abort(new Error('changed my mind'));
      await expect(quitter).rejects.toThrow('changed my mind');
      await eventually(async () => (await raw.children(parent))?.length === 2, 5000, 'withdrawal');
      await holder.release();
      const handle = await patient;
      expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
      await handle.release();
    } finally {
      await raw.close();
    }
  });
});
