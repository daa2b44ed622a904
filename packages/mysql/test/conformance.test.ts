import { describeLockProvider } from '@lockkit/conformance';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, mysqlUrl, timeScale } from './support.js';

describeLockProvider({
  name: 'mysql',
  createProvider: () => createMySqlLockProvider({ connection: mysqlUrl() }),
  faults: {
    // The real-world break: the server ends the session that holds the lock.
    loseLock: (handle, provider) =>
      killConnection((provider as MySqlLockProvider).connectionIdOf(handle)),
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    exportName: 'createProvider',
    env: { LOCKKIT_MYSQL_URL: mysqlUrl() },
  },
  goldenKeys,
  timeScale,
});
