import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort } from '@lockkit/testkit';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, mysqlUrl, timeScale } from './support.js';

const closedPort = await findFreePort();

// The same contract with fencing tokens from a MariaDB SEQUENCE (opt-in; the default is the counter table).
describeLockProvider({
  name: 'mysql (fencing: sequence)',
  createProvider: (options) =>
    createMySqlLockProvider({ ...options, connection: mysqlUrl(), fencing: 'sequence' }),
  faults: {
    loseLock: (handle, provider) =>
      killConnection((provider as MySqlLockProvider).connectionIdOf(handle)),
    // Refused connections only: pausing the shared server would disturb other test files
    // (conformance.test.ts pauses a server of its own).
    outage: {
      createUnreachableProvider: () =>
        createMySqlLockProvider({
          connection: `mysql://root@127.0.0.1:${closedPort}/test`,
          fencing: 'sequence',
        }),
      address: `127.0.0.1:${closedPort}`,
    },
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    exportName: 'createProvider',
    env: { LOCKKIT_MYSQL_URL: mysqlUrl(), LOCKKIT_MYSQL_FENCING: 'sequence' },
  },
  goldenKeys,
  timeScale,
});
