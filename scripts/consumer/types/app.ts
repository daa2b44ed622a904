// Type-checked with tsc --strict, skipLibCheck false, under module node16 (CommonJS),
// nodenext (ESM) and bundler: every package's declarations must resolve with nothing
// undeclared, and the errors must narrow with instanceof.
import { acquireAll, type CompositeLockHandle, createMemoryLockProvider } from '@lockkit/core';
import { createEtcdLockProvider } from '@lockkit/etcd';
import { createFileLockProvider } from '@lockkit/file';
import { createMySqlLockProvider } from '@lockkit/mysql';
import { createPostgresLockProvider } from '@lockkit/postgres';
import { createRedisLockProvider } from '@lockkit/redis';
import { createZooKeeperLockProvider } from '@lockkit/zookeeper';
import { Redis } from 'ioredis';
import {
  BackendNotInstalledError,
  BackendUnavailableError,
  createLockProvider,
  type ILockProvider,
  LockTimeoutError,
  parseLockUrl,
} from 'lockkit';
import pg from 'pg';

export async function main(url: string): Promise<bigint> {
  const providers: ILockProvider[] = [
    createMemoryLockProvider(),
    createFileLockProvider({ directory: '/tmp/locks' }),
    createRedisLockProvider({ nodes: new Redis({ lazyConnect: true }) }),
    createPostgresLockProvider({ pool: new pg.Pool() }),
    createMySqlLockProvider({ connection: 'mysql://root@localhost/test' }),
    createZooKeeperLockProvider({ connectionString: 'localhost:2181' }),
    createEtcdLockProvider({ hosts: 'localhost:2379' }),
  ];
  await Promise.all(providers.map((provider) => provider.close()));
  const backend: string = parseLockUrl(url).backend;
  const locks = await createLockProvider(url, { namespace: backend });
  try {
    const both: CompositeLockHandle = await acquireAll([
      locks.createLock('a'),
      locks.createLock('b'),
    ]);
    const token: bigint = both.handles[0]?.fencingToken ?? 0n;
    if (!(await both.release())) throw new Error('release returned false');
    return token;
  } catch (error) {
    if (error instanceof LockTimeoutError) return BigInt(error.timeoutMs);
    if (error instanceof BackendNotInstalledError) throw new Error(error.installCommand);
    if (error instanceof BackendUnavailableError) throw error.cause;
    throw error;
  } finally {
    await locks.close();
  }
}
