import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createLockProvider, type ILockProvider, LockTimeoutError } from '../src/index.js';
import { redlockUrl, serverUrls, withScheme } from './support.js';

const directory = mkdtempSync(join(tmpdir(), 'lockkit-url-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const servers = serverUrls();
const fileUrl = pathToFileURL(directory).href;

// One row per scheme, each against a real server: the URL picks the backend, and two
// providers made from it exclude each other.
const cases: readonly (readonly [string, string, string])[] = [
  ['memory:', 'memory:', 'memory'],
  ['file:', fileUrl, 'file'],
  ['redis: (one node)', servers.redis[0]!, 'redis'],
  ['redis: (Redlock over three hosts)', redlockUrl(servers.redis), 'redis'],
  ['postgres:', servers.postgres, 'postgres'],
  ['postgresql:', withScheme(servers.postgres, 'postgresql'), 'postgres'],
  ['mysql:', servers.mysql, 'mysql'],
  ['mariadb:', withScheme(servers.mysql, 'mariadb'), 'mysql'],
  ['zookeeper:', servers.zookeeper, 'zookeeper'],
  ['zk:', withScheme(servers.zookeeper, 'zk'), 'zookeeper'],
  ['etcd:', `${servers.etcd}/lockkit-url-test/`, 'etcd'],
];

describe('createLockProvider on real servers', () => {
  it.each(cases)('%s', async (_label, url, backend) => {
    const name = `orders:${backend}:${Math.random()}`;
    const first = await createLockProvider(url);
    const second = await createLockProvider(url);
    try {
      expect(first.backend).toBe(backend);
      const handle = await first.createLock(name).acquire({ timeout: 5_000 });
      expect(handle.fencingToken).toBeGreaterThan(0n);
      await expect(second.createLock(name).acquire({ timeout: 100 })).rejects.toSatisfy((error) =>
        LockTimeoutError.isInstance(error),
      );
      expect(await handle.release()).toBe(true);
      const next = await second.createLock(name).acquire({ timeout: 5_000 });
      expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
      expect(await next.release()).toBe(true);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('the namespace query parameter isolates applications', async () => {
    const providers: ILockProvider[] = await Promise.all([
      createLockProvider(`${servers.postgres}?namespace=billing`),
      createLockProvider(`${servers.postgres}?namespace=shipping`),
      createLockProvider(servers.postgres, { namespace: 'billing' }),
    ]);
    const [billing, shipping, billingAgain] = providers as [
      ILockProvider,
      ILockProvider,
      ILockProvider,
    ];
    try {
      const held = await billing.createLock('nightly').acquire({ timeout: 5_000 });
      expect(await shipping.createLock('nightly').tryAcquire()).not.toBeNull();
      expect(await billingAgain.createLock('nightly').tryAcquire()).toBeNull();
      await held.release();
    } finally {
      await Promise.all(providers.map((provider) => provider.close()));
    }
  });

  it('query options reach the backend: a fixed 2000 ms file lease is lost on time', async () => {
    const provider = await createLockProvider(`${fileUrl}?leaseMs=2000&autoExtend=false`);
    try {
      const handle = await provider.createLock('lease').acquire();
      const started = performance.now();
      await new Promise((resolve) => handle.signal.addEventListener('abort', resolve));
      // The default lease (30 s) would not be lost for half a minute.
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(await handle.release()).toBe(false);
    } finally {
      await provider.close();
    }
  });
});
