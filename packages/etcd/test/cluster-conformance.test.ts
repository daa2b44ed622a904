import { describeLockProvider, waitFor } from '@lockkit/conformance';
import { findFreePort, startEtcdCluster } from '@lockkit/testkit';
import { afterAll } from 'vitest';
import { EtcdLockProvider } from '../src/index.js';
import { testProvider } from './support.js';

// Three members on private loopback ports; the leader is killed before the suite runs, so
// every case runs on the two that are left (a quorum) while the clients still list all three:
// requests that go to the dead member fail over to the others.
const cluster = await startEtcdCluster(3);
afterAll(() => cluster.stop());
const killed = await cluster.leader();
await killed.kill();
await waitFor(
  () =>
    cluster.leader().then(
      () => true,
      () => false,
    ),
  10_000,
  'the two members left elect a leader',
);
const alive = cluster.members.filter((member) => member !== killed);
const url = cluster.url;
const refused = await Promise.all([findFreePort(), findFreePort(), findFreePort()]);
const unreachable = refused.map((port) => `127.0.0.1:${port}`).join(',');

describeLockProvider({
  name: 'etcd (three members, one killed)',
  createProvider: (options) => testProvider(url, options),
  faults: {
    loseLock: async (handle, provider) => {
      if (!(provider instanceof EtcdLockProvider)) throw new TypeError('not etcd');
      await provider.loseLock(handle);
    },
    outage: {
      createUnreachableProvider: () => testProvider(`etcd://${unreachable}`),
      address: unreachable,
      // Freeze both members that are left: connections stay open and nothing answers.
      interrupt: async () => {
        for (const member of alive) await member.pause();
        return async () => {
          for (const member of alive) await member.resume();
        };
      },
    },
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    env: { LOCKKIT_TEST_ETCD_URL: url },
  },
  timeScale: Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1),
});
