import { describeLockProvider } from '@lockkit/conformance';
import { findFreePort, startMariaDb } from '@lockkit/testkit';
import { afterAll } from 'vitest';
import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';
import { goldenKeys, killConnection, timeScale } from './support.js';

// A server of its own: the outage case pauses it, which other test files must not see.
const server = await startMariaDb({ useEnvironment: false });
afterAll(() => server.stop());
const url = server.url;
const closedPort = await findFreePort();

describeLockProvider({
  name: 'mysql',
  createProvider: (options) => createMySqlLockProvider({ ...options, connection: url }),
  faults: {
    // The real-world break: the server ends the session that holds the lock.
    loseLock: (handle, provider) =>
      killConnection((provider as MySqlLockProvider).connectionIdOf(handle), url),
    outage: {
      // Nothing listens on that port: every connection is refused.
      createUnreachableProvider: () =>
        createMySqlLockProvider({ connection: `mysql://root@127.0.0.1:${closedPort}/test` }),
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
    env: { LOCKKIT_MYSQL_URL: url },
  },
  goldenKeys,
  timeScale,
});
