// Bundled with esbuild (ESM and CommonJS output) and run from a directory without
// node_modules: the backends reach the bundle through createLockProvider's backendModules.
import * as file from '@lockkit/file';
import * as mysql from '@lockkit/mysql';
import * as postgres from '@lockkit/postgres';
import * as redis from '@lockkit/redis';
import * as zookeeper from '@lockkit/zookeeper';
import { createLockProvider, LockTimeoutError } from 'lockkit';

// Not @lockkit/etcd: its client, etcd3, reads its .proto files from its own directory at run
// time, so it cannot be bundled (keep it external).
const backendModules = { file, mysql, postgres, redis, zookeeper };

async function run(urls) {
  const seen = [];
  for (const url of urls) {
    const locks = await createLockProvider(url, { backendModules });
    const other = await createLockProvider(url, { backendModules });
    try {
      const handle = await locks.createLock('bundle').acquire({ timeout: 10_000 });
      const busy = await other
        .createLock('bundle')
        .acquire({ timeout: 50 })
        .catch((error) => error);
      if (!(busy instanceof LockTimeoutError)) throw new Error(`expected a timeout, got ${busy}`);
      if (!(await handle.release())) throw new Error('release returned false');
      seen.push(`${locks.backend}#${handle.fencingToken}`);
    } finally {
      await Promise.all([locks.close(), other.close()]);
    }
  }
  return seen;
}

run(process.argv.slice(2)).then(
  (seen) => console.log(`bundle ok: ${seen.join(' ')}`),
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
