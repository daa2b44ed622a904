import { InvalidArgumentError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { createZooKeeperLockProvider, type ZooKeeperLockProviderOptions } from '../src/index.js';
import { RawZooKeeper, zookeeperUrl } from './support.js';

const url = zookeeperUrl();
const hostPort = url.replace(/^zookeeper:\/\//, '');

describe('provider options', () => {
  it.each<[string, unknown]>([
    ['neither connectionString nor client', {}],
    ['both connectionString and client', { connectionString: url, client: {} }],
    ['a malformed connection string', { connectionString: 'localhost' }],
    ['a connection string with an empty chroot segment', { connectionString: 'a:1//x' }],
    ['a relative basePath', { connectionString: url, basePath: 'locks' }],
    ['a basePath with a trailing slash', { connectionString: url, basePath: '/locks/' }],
    ['a basePath with ..', { connectionString: url, basePath: '/a/../b' }],
    ['a fractional session timeout', { connectionString: url, sessionTimeoutMs: 1.5 }],
    ['a tiny session timeout', { connectionString: url, sessionTimeoutMs: 10 }],
    ['a negative operation timeout', { connectionString: url, operationTimeoutMs: -1 }],
    ['a NaN cleanup delay', { connectionString: url, parentCleanupDelayMs: Number.NaN }],
    ['an empty acl', { connectionString: url, acl: [] }],
    ['auth without a scheme', { connectionString: url, auth: [{ scheme: '', auth: 'x' }] }],
    ['auth that is not an array', { connectionString: url, auth: { scheme: 'digest', auth: 'x' } }],
    ['a null client', { client: null }],
    ['a non-boolean assumePathExists', { connectionString: url, assumePathExists: 'yes' }],
    ['an unknown option', { connectionString: url, sessionTimeout: 1000 }],
  ])('rejects %s with InvalidArgumentError, before any I/O', (_label, options) => {
    expect(() => createZooKeeperLockProvider(options as ZooKeeperLockProviderOptions)).toThrow(
      InvalidArgumentError,
    );
  });

  it('accepts a zookeeper:// URL with several hosts and a chroot, and works inside the chroot', async () => {
    const chroot = `/lockkit-chroot-${Math.random().toString(36).slice(2)}`;
    const raw = await RawZooKeeper.connect(url);
    try {
      expect(await raw.create(chroot)).toBe(0);
      const provider = createZooKeeperLockProvider({
        connectionString: `zookeeper://${hostPort},${hostPort}${chroot}`,
        sessionTimeoutMs: 2000,
        parentCleanupDelayMs: 0,
      });
      expect(provider.backend).toBe('zookeeper');
      expect(provider.capabilities).toMatchObject({
        crossProcess: true,
        leases: false,
        fifo: true,
        inspection: true,
      });
      const handle = await provider.createLock('inside').acquire();
      const path = provider.nodePathOf(handle);
      expect(path.startsWith('/lockkit/mutex.inside.')).toBe(true); // chroot-relative
      const stat = await raw.exists(`${chroot}${path}`);
      expect(stat?.czxid.readBigInt64BE(0)).toBe(handle.fencingToken);
      expect(await handle.release()).toBe(true);
      await provider.close();
      expect(await raw.children(`${chroot}/lockkit`)).toEqual([]);
    } finally {
      await raw.remove(`${chroot}/lockkit`);
      await raw.remove(chroot);
      await raw.close();
    }
  });

  it('an injected client is used, never closed, and never connected by lockkit', async () => {
    const raw = await RawZooKeeper.connect(url);
    try {
      const provider = createZooKeeperLockProvider({ client: raw.client, sessionTimeoutMs: 4000 });
      const handle = await provider.createLock(`injected-${Math.random()}`).acquire();
      expect(provider.currentClient).toBe(raw.client);
      expect(await handle.release()).toBe(true);
      await provider.close();
      // still open and usable by its owner
      expect(await raw.exists('/')).not.toBeNull();
    } finally {
      await raw.close();
    }
  });

  it('options are frozen into the provider: later mutation changes nothing', async () => {
    const options = { connectionString: url, sessionTimeoutMs: 2000 };
    const provider = createZooKeeperLockProvider(options);
    options.sessionTimeoutMs = 1;
    expect(provider.capabilities.lostDetectionMs).toBe(3000);
    expect(Object.isFrozen(provider.capabilities)).toBe(true);
    await provider.close();
  });
});
