import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort, startPostgres } from '@lockkit/testkit';
import pg from 'pg';
import { afterAll } from 'vitest';
import {
  advisoryKey,
  createPostgresLockProvider,
  type PostgresLockProvider,
} from '../src/index.js';
import { postgresSettings } from './global-setup.js';
import { timeScale } from './support.js';

// A server of its own: the outage case pauses it, which other test files must not see.
const server = await startPostgres({ useEnvironment: false, settings: postgresSettings });
afterAll(() => server.stop());
const url = server.url;
const closedPort = await findFreePort();

describeLockProvider({
  name: 'postgres',
  createProvider: (options) => createPostgresLockProvider({ ...options, connection: url }),
  faults: {
    // What a DBA or a failover does: the server ends the holder's session.
    loseLock: async (handle, provider) => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const pid = (provider as PostgresLockProvider).backendPidOf(handle);
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      } finally {
        await admin.end();
      }
    },
    outage: {
      // Nothing listens on that port: every connection is refused.
      createUnreachableProvider: () =>
        createPostgresLockProvider({
          connection: `postgres://postgres@127.0.0.1:${closedPort}/postgres`,
        }),
      address: `127.0.0.1:${closedPort}`,
      // A hung server: SIGSTOP keeps its sockets open but answers nothing.
      interrupt: async () => {
        await server.pause();
        return () => server.resume();
      },
    },
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    exportName: 'createProvider',
    env: { LOCKKIT_TEST_POSTGRES_URL: url },
  },
  goldenKeys: {
    map: (name) => advisoryKey('', 'mutex', name),
    expected: [
      ['', '-73170409979139952'],
      ['orders:42', '-8500308857864620681'],
      ['Ünïcödé 🔒 名前', '-4606876522729966810'],
    ],
  },
  timeScale,
});
