import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort } from '@lockkit/testkit';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, mysqlUrl, timeScale } from './support.js';

const closedPort = await findFreePort();

// The same contract with the opt-in fencing sources: a MariaDB SEQUENCE, and a counter row per
// lock (the default is 'blocks', in conformance.test.ts).
for (const fencing of ['sequence', 'table'] as const) {
  describeLockProvider({
    name: `mysql (fencing: ${fencing})`,
    createProvider: (options) =>
      createMySqlLockProvider({ ...options, connection: mysqlUrl(), fencing }),
    faults: {
      loseLock: (handle, provider) =>
        killConnection((provider as MySqlLockProvider).connectionIdOf(handle)),
      // Refused connections only: pausing the shared server would disturb other test files
      // (conformance.test.ts pauses a server of its own).
      outage: {
        createUnreachableProvider: () =>
          createMySqlLockProvider({
            connection: `mysql://root@127.0.0.1:${closedPort}/test`,
            fencing,
          }),
        address: `127.0.0.1:${closedPort}`,
      },
    },
    childProvider: {
      module: new URL('./child-provider.ts', import.meta.url).href,
      exportName: 'createProvider',
      env: { LOCKKIT_MYSQL_URL: mysqlUrl(), LOCKKIT_MYSQL_FENCING: fencing },
    },
    goldenKeys,
    timeScale,
  });
}
