import { describeLockProvider } from '@lockkit/conformance';
import pg from 'pg';
import { inject } from 'vitest';
import {
  advisoryKey,
  createPostgresLockProvider,
  type PostgresLockProvider,
} from '../src/index.js';

const url = inject('lockkitServers').postgresUrl!;

describeLockProvider({
  name: 'postgres',
  createProvider: () => createPostgresLockProvider({ connection: url }),
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
  timeScale: 1,
});
