import { describeLockProvider } from '@lockkit/conformance';
import { grantBehind } from '@lockkit/core/backend';
import { attachServer, findFreePort } from '@lockkit/testkit';
import pg from 'pg';
import { inject } from 'vitest';
import { createLeaseTableLockProvider, type LeaseGrant, leaseKey } from '../src/index.js';
import { testOptions } from './test-options.js';

const { postgresUrl, servers } = inject('lockkitServers');
const url = postgresUrl!;
const refusedPort = await findFreePort(); // nothing listens there: connections are refused
const scale = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

describeLockProvider({
  name: 'lease-table',
  createProvider: (options) =>
    createLeaseTableLockProvider({ ...options, connection: url, ...testOptions }),
  faults: {
    // What an operator's cleanup script would do: delete the holder's row.
    loseLock: async (handle) => {
      const { key, owner } = grantBehind<LeaseGrant>(handle).grant;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query('DELETE FROM lockkit_lease WHERE key = $1 AND owner = $2', [key, owner]);
      } finally {
        await admin.end();
      }
    },
    outage: {
      createUnreachableProvider: () =>
        createLeaseTableLockProvider({
          connection: `postgres://postgres@127.0.0.1:${refusedPort}/postgres`,
          ...testOptions,
        }),
      address: `127.0.0.1:${refusedPort}`,
      // A hung server: every connection stays open and nothing answers. (vitest.config.ts
      // runs the test files one after another, so no other file sees the pause.)
      interrupt: async () => {
        const server = attachServer(servers.postgres!);
        await server.pause();
        return () => server.resume();
      },
    },
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    env: { LEASE_TABLE_TEST_URL: url },
  },
  goldenKeys: {
    map: (name) => leaseKey('', 'mutex', name),
    expected: [
      ['', 'mutex.736axzszd6ujbspwk7htfwyv5m'],
      ['orders:42', 'mutex.orders_42.rienmik5352xot7hresmfk6j2t'],
      ['Ünïcödé 🔒 名前', 'mutex._n_c_d_______.yairmnp2s7zsn5tpzfvxeqhb5n'],
    ],
  },
  timeScale: scale,
});
