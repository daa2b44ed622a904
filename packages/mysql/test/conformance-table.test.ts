import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort } from '@lockkit/testkit';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, mysqlUrl, timeScale } from './support.js';

const closedPort = await findFreePort();

// The same contract with fencing tokens from the counter table (the default on MySQL; MariaDB's default is the sequence).
describeLockProvider({
  name: 'mysql (fencing: table)',
  createProvider: (options) =>
    createMySqlLockProvider({ ...options, connection: mysqlUrl(), fencing: 'table' }),
  faults: {
    loseLock: (handle, provider) =>
      killConnection((provider as MySqlLockProvider).connectionIdOf(handle)),
    // Refused connections only: pausing the shared server would disturb other test files
    // (conformance.test.ts pauses a server of its own).
    outage: {
      createUnreachableProvider: () =>
        createMySqlLockProvider({
          connection: `mysql://root@127.0.0.1:${closedPort}/test`,
          fencing: 'table',
        }),
      address: `127.0.0.1:${closedPort}`,
    },
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    exportName: 'createProvider',
    env: { LOCKKIT_MYSQL_URL: mysqlUrl(), LOCKKIT_MYSQL_FENCING: 'table' },
  },
  goldenKeys,
  timeScale,
});
