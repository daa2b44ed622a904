import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort } from '@lockkit/testkit';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, mysqlUrl, timeScale } from './support.js';

/**
 * The same contract with an opt-in fencing source (the default, 'blocks', is in
 * conformance.test.ts). One file per source, so the two run on vitest's two workers at once.
 */
export async function describeFencingConformance(fencing: 'sequence' | 'table'): Promise<void> {
  const closedPort = await findFreePort();
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
