import { connect } from 'node:net';
import { BackendUnavailableError, LockError } from '@lockkit/core';
import { readableKey } from '@lockkit/core/backend';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZooKeeperLockProvider } from '../src/index.js';
import { zookeeperModule } from '../src/zookeeper-client.js';
import { ReplyProxy } from './reply-proxy.js';
import { eventually, RawZooKeeper, testProvider, zookeeperUrl } from './support.js';

const url = zookeeperUrl();
const providers: ZooKeeperLockProvider[] = [];
const provider = (extra: Parameters<typeof testProvider>[1] = {}): ZooKeeperLockProvider => {
  const created = testProvider(url, extra);
  providers.push(created);
  return created;
};
afterAll(async () => {
  await Promise.all(providers.map((created) => created.close()));
});
const unique = (label: string): string => `${label}-${Math.random().toString(36).slice(2)}`;
const parentOf = (path: string): string => path.replace(/\/[^/]+$/, '');

/** Requests the server received on the connection of session `sid` (the `cons` listing). */
async function receivedBy(sid: Buffer): Promise<number> {
  const { hostname, port } = new URL(url.replace(/^zookeeper:/, 'http:'));
  const cons = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write('cons'));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
  const hex = BigInt(`0x${sid.toString('hex')}`).toString(16);
  const line = cons.split('\n').find((entry) => entry.includes(`sid=0x${hex},`));
  return Number(/recved=(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN);
}

describe('ZooKeeper nodes', () => {
  it('lock parents are pinned: <basePath>/<family>.<readable name>.<hash of the original name>', async () => {
    const locks = provider({ basePath: '/lockkit-golden' });
    const expected: [string, string][] = [
      ['orders', '/lockkit-golden/mutex.orders.ozhwpo7m6epkhsxcm7eoaeklqv'],
      ['Orders', '/lockkit-golden/mutex.Orders.5efnxio6dak2qnfvhbd4ttiphm'],
      ['a/b/../c', '/lockkit-golden/mutex.a_b____c.peiljszaukurtrswwvt5raobjo'],
      ['', '/lockkit-golden/mutex.736axzszd6ujbspwk7htfwyv5m'],
    ];
    for (const [name, parent] of expected) {
      const handle = await locks.createLock(name).acquire();
      const path = locks.nodePathOf(handle);
      expect(parentOf(path)).toBe(parent);
      expect(path.slice(parent.length + 1)).toMatch(/^lock-[0-9a-f-]{36}-\d{10}$/);
      await handle.release();
    }
    const rw = await locks.createReadWriteLock('orders').acquireWrite();
    expect(locks.nodePathOf(rw)).toMatch(/\/rw\.orders\.[a-z2-7]{26}\/write-[0-9a-f-]{36}-\d{10}$/);
    await rw.release();
  });

  it('an uncontended acquire + release costs the server three requests: create, list, delete', async () => {
    const raw = await RawZooKeeper.connect(url);
    try {
      const locks = provider({ connectionString: undefined, client: raw.client });
      const lock = locks.createLock(unique('requests'));
      await (await lock.acquire()).release(); // creates the parent
      const before = await receivedBy(raw.client.getSessionId());
      for (let cycle = 0; cycle < 20; cycle++) await (await lock.acquire()).release();
      const received = (await receivedBy(raw.client.getSessionId())) - before;
      // A ping may fall in between; the node's own watch is set only when the queue changes.
      expect(received).toBeGreaterThanOrEqual(60);
      expect(received).toBeLessThanOrEqual(62);
    } finally {
      await raw.close();
    }
  });

  it('the fencing token is the node czxid and keeps growing after the parent was deleted', async () => {
    const locks = provider({ parentCleanupDelayMs: 0 });
    const raw = await RawZooKeeper.connect(url);
    try {
      const lock = locks.createLock(unique('czxid'));
      const first = await lock.acquire();
      const path = locks.nodePathOf(first);
      const stat = await raw.exists(path);
      expect(first.fencingToken).toBe(stat!.czxid.readBigInt64BE(0));
      await first.release();
      // The empty parent is removed with the release, which resets its sequence counter...
      expect(await raw.exists(parentOf(path))).toBeNull();
      const second = await lock.acquire();
      expect(locks.nodePathOf(second)).toMatch(/-0000000000$/);
      expect(path).toMatch(/-0000000000$/);
      // ...yet the token still increases: czxid is the cluster-wide transaction id.
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      await second.release();
    } finally {
      await raw.close();
    }
  });

  it('empty lock parents are removed after the cleanup delay, or on close', async () => {
    const raw = await RawZooKeeper.connect(url);
    try {
      const delayed = provider({ parentCleanupDelayMs: 200 });
      const handle = await delayed.createLock(unique('reap')).acquire();
      const parent = parentOf(delayed.nodePathOf(handle));
      await handle.release();
      expect(await raw.exists(parent)).not.toBeNull(); // kept for a quick re-acquire
      await eventually(async () => (await raw.exists(parent)) === null, 5000, 'parent removal');

      const closing = testProvider(url, { parentCleanupDelayMs: 60_000 });
      const other = await closing.createSemaphore(unique('reap-on-close'), 3).acquire();
      const otherParent = parentOf(closing.nodePathOf(other));
      await other.release();
      await closing.close();
      expect(await raw.exists(otherParent)).toBeNull();
    } finally {
      await raw.close();
    }
  });

  it('protected create: a create whose reply was lost is found, not duplicated', async () => {
    const proxy = await ReplyProxy.start(url);
    const raw = await RawZooKeeper.connect(url);
    try {
      const locks = provider({
        connectionString: proxy.url,
        sessionTimeoutMs: 4000,
        operationTimeoutMs: 10_000,
        parentCleanupDelayMs: 60_000,
      });
      const name = unique('protected');
      const warm = await locks.createLock(name).acquire(); // connected; the parent exists
      await warm.release();
      const parent = `/lockkit/${readableKey('', 'mutex', name)}`;
      proxy.holdReplies();
      const acquiring = locks.createLock(name).acquire({ timeout: 10_000 });
      acquiring.catch(() => undefined); // awaited below
      // The create reaches the server and is applied; its reply never arrives.
      await eventually(
        async () => ((await raw.children(parent)) ?? []).length > 0,
        5000,
        'the create to be applied',
      );
      proxy.dropHeldAndDisconnect(); // CONNECTION_LOSS for the create
      const handle = await acquiring;
      expect(parentOf(locks.nodePathOf(handle))).toBe(parent);
      expect(await raw.children(parent)).toHaveLength(1); // adopted, not created again
      expect(await handle.release()).toBe(true);
    } finally {
      await raw.close();
      await proxy.close();
    }
  });

  it('a create whose reply comes after the deadline is deleted when it lands', async () => {
    const proxy = await ReplyProxy.start(url);
    const raw = await RawZooKeeper.connect(url);
    try {
      const locks = provider({
        connectionString: proxy.url,
        sessionTimeoutMs: 4000,
        operationTimeoutMs: 300,
        parentCleanupDelayMs: 60_000,
      });
      const warm = await locks.createLock('warm-up').acquire();
      await warm.release();
      const name = unique('late');
      const lock = locks.createLock(name);
      // Make the parent exist, so the late create is the only child.
      const first = await lock.acquire();
      const parent = parentOf(locks.nodePathOf(first));
      await first.release();
      proxy.holdReplies();
      // One attempt (a timed acquire would retry through the outage until its deadline).
      const failed = lock.tryAcquire();
      await expect(failed).rejects.toSatisfy(BackendUnavailableError.isInstance);
      expect(await raw.children(parent)).toHaveLength(1); // applied, reply still held
      proxy.deliverHeld();
      await eventually(async () => (await raw.children(parent))?.length === 0, 5000, 'cleanup');
      const again = await locks.createLock(name).tryAcquire();
      expect(again).not.toBeNull();
      await again?.release();
    } finally {
      await raw.close();
      await proxy.close();
    }
  });

  it('a reply with an error code the client library does not know fails the request, not the process', async () => {
    const proxy = await ReplyProxy.start(url);
    const crashes: unknown[] = [];
    const onCrash = (error: unknown): void => {
      crashes.push(error);
    };
    process.on('uncaughtException', onCrash);
    try {
      const locks = provider({ connectionString: proxy.url, sessionTimeoutMs: 4000 });
      const warm = await locks.createLock('warm-up').acquire(); // connected
      await warm.release();
      // ZooKeeper 3.5+ codes such as -12 are unknown to node-zookeeper-client 1.1.x, whose
      // reply parser would throw from the socket's data handler.
      proxy.failNextReply(-12);
      const outcome = await locks
        .createLock(unique('unknown-code'))
        .acquire({ timeout: 5000 })
        .then(
          async (handle) => {
            await handle.release();
            return 'granted';
          },
          (error: unknown) => error,
        );
      if (outcome !== 'granted') expect(LockError.isInstance(outcome)).toBe(true);
      expect(crashes).toEqual([]);
      // The provider still works.
      const after = await locks.createLock(unique('after')).acquire({ timeout: 5000 });
      await after.release();
    } finally {
      process.off('uncaughtException', onCrash);
      await proxy.close();
    }
  });

  it('ACL and auth options: nodes are created with the ACL, under the given credentials', async () => {
    const basePath = `/${unique('lockkit-acl')}`;
    const auth = [{ scheme: 'digest', auth: 'alice:secret' }];
    const alice = provider({ basePath, auth, acl: zookeeperModule().ACL.CREATOR_ALL_ACL });
    const name = unique('acl');
    const handle = await alice.createLock(name).acquire();
    const stranger = await RawZooKeeper.connect(url);
    try {
      expect(await stranger.remove(alice.nodePathOf(handle))).toBe(-102); // NO_AUTH
      const mallory = provider({ basePath });
      await expect(mallory.createLock(name).tryAcquire()).rejects.toSatisfy(
        BackendUnavailableError.isInstance,
      );
      expect(await handle.release()).toBe(true);
    } finally {
      await stranger.close();
    }
  });

  it('assumePathExists: the base path is neither created nor removed', async () => {
    const basePath = `/${unique('provisioned')}`;
    const raw = await RawZooKeeper.connect(url);
    try {
      const locks = provider({ basePath, assumePathExists: true, parentCleanupDelayMs: 0 });
      await expect(locks.createLock('x').tryAcquire()).rejects.toThrow(/does not exist/);
      expect(await raw.exists(basePath)).toBeNull();
      expect(await raw.create(basePath)).toBe(0);
      const handle = await locks.createLock('x').acquire();
      expect(locks.nodePathOf(handle).startsWith(`${basePath}/mutex.x.`)).toBe(true);
      await handle.release();
      expect(await raw.children(basePath)).toEqual([]);
      expect(await raw.remove(basePath)).toBe(0);
    } finally {
      await raw.close();
    }
  });

  it('namespaces isolate: the same name in two namespaces is two locks', async () => {
    const name = unique('ns');
    const a = await provider({ namespace: 'app-a' }).createLock(name).tryAcquire();
    const b = await provider({ namespace: 'app-b' }).createLock(name).tryAcquire();
    const a2 = await provider({ namespace: 'app-a' }).createLock(name).tryAcquire();
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(a2).toBeNull();
    await a?.release();
    await b?.release();
  });
});
