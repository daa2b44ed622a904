import { describeLockProvider } from '@lockkit/conformance';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, mysqlUrl, timeScale } from './support.js';

// The same contract with fencing tokens drawn from a MariaDB SEQUENCE instead of the table.
describeLockProvider({
  name: 'mysql (fencing: sequence)',
  createProvider: () => createMySqlLockProvider({ connection: mysqlUrl(), fencing: 'sequence' }),
  faults: {
    loseLock: (handle, provider) =>
      killConnection((provider as MySqlLockProvider).connectionIdOf(handle)),
  },
  childProvider: {
    module: new URL('./child-provider.ts', import.meta.url).href,
    exportName: 'createProvider',
    env: { LOCKKIT_MYSQL_URL: mysqlUrl(), LOCKKIT_MYSQL_FENCING: 'sequence' },
  },
  goldenKeys,
  timeScale,
});
