import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort, startZooKeeper } from '@lockkit/testkit';
import { afterAll } from 'vitest';
import { lockParentPath, ZooKeeperLockProvider } from '../src/index.js';
import { testProvider } from './support.js';

// A server of this file's own: the outage cases pause it, which must not disturb the other
// test files running on the shared one.
const server = await startZooKeeper({ tickTimeMs: 200, useEnvironment: false });
afterAll(async () => {
  await server.resume();
  await server.stop();
});
const url = server.url;
// Nothing listens here, so every connection is refused.
const unreachable = `127.0.0.1:${await findFreePort()}`;

describeLockProvider({
  name: 'zookeeper',
  createProvider: (options) => testProvider(url, options),
  faults: {
    // Delete the holder's node as an operator would; the handle is not told.
    loseLock: async (handle, provider) => {
      if (!(provider instanceof ZooKeeperLockProvider)) throw new TypeError('not ZooKeeper');
      await provider.loseLock(handle);
    },
    outage: {
      createUnreachableProvider: () => testProvider(unreachable),
      address: unreachable,
      // Freeze the server (SIGSTOP): connections stay open and nothing answers.
      interrupt: async () => {
        await server.pause();
        return () => server.resume();
      },
    },
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    env: { LOCKKIT_TEST_ZOOKEEPER_URL: url },
  },
  // Name → lock parent node, version 1: changing any of these is a breaking change.
  goldenKeys: {
    map: (name) => lockParentPath('/lockkit', '', 'mutex', name),
    expected: [
      ['', '/lockkit/mutex.736axzszd6ujbspwk7htfwyv5m'],
      ['orders', '/lockkit/mutex.orders.ozhwpo7m6epkhsxcm7eoaeklqv'],
      ['Orders', '/lockkit/mutex.Orders.5efnxio6dak2qnfvhbd4ttiphm'],
      ['a/b/../c', '/lockkit/mutex.a_b____c.peiljszaukurtrswwvt5raobjo'],
      ['Ünïcode 名前', '/lockkit/mutex._n_code___.e7radx5i4etih37y72notn3xek'],
      ['nul\0byte', '/lockkit/mutex.nul_byte.gxbp5sjmpadodhtok3j2jr37ph'],
      [
        "x'); DROP TABLE locks;--",
        '/lockkit/mutex.x____DROP_TABLE_locks_--.73j4zdzjshokz5wf6jegrthtwz',
      ],
      ['{tag}', '/lockkit/mutex._tag_.ryojdz26y3br7iq7er2p366mqz'],
    ],
  },
  timeScale: Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1),
});
