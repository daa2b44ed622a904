// ESM smoke: `node smoke.mjs <backend>`; backend is file, redis, redlock, postgres, mysql,
// zookeeper, etcd or url (lockkit's createLockProvider over every URL). URLs come from env.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LockError, LockTimeoutError } from '@lockkit/core';
import smokeSteps from './smoke-steps.cjs';

const { runSmoke } = smokeSteps;
const env = JSON.parse(process.env.LOCKKIT_CONSUMER_SERVERS);
const directory = mkdtempSync(
  join(process.env.LOCKKIT_CONSUMER_TMP ?? tmpdir(), 'lockkit-consumer-'),
);
const errors = { LockError, LockTimeoutError };

const openers = {
  file: async () => {
    const { createFileLockProvider } = await import('@lockkit/file');
    return () => createFileLockProvider({ directory });
  },
  redis: async () => {
    const { createRedisLockProvider } = await import('@lockkit/redis');
    return () => createRedisLockProvider({ nodes: env.redisUrls[0] });
  },
  redlock: async () => {
    const { createRedisLockProvider } = await import('@lockkit/redis');
    return () => createRedisLockProvider({ nodes: env.redisUrls });
  },
  postgres: async () => {
    const { createPostgresLockProvider } = await import('@lockkit/postgres');
    return () => createPostgresLockProvider({ connection: env.postgresUrl });
  },
  mysql: async () => {
    const { createMySqlLockProvider } = await import('@lockkit/mysql');
    return () => createMySqlLockProvider({ connection: env.mysqlUrl });
  },
  zookeeper: async () => {
    const { createZooKeeperLockProvider } = await import('@lockkit/zookeeper');
    return () => createZooKeeperLockProvider({ connectionString: new URL(env.zookeeperUrl).host });
  },
  etcd: async () => {
    const { createEtcdLockProvider } = await import('@lockkit/etcd');
    return () => createEtcdLockProvider({ hosts: new URL(env.etcdUrl).host });
  },
};

const which = process.argv[2];
if (which === 'url') {
  const lockkit = await import('lockkit');
  const urls = [
    pathToFileURL(directory).href,
    env.redisUrls[0],
    `redis://${env.redisUrls.map((url) => new URL(url).host).join(',')}`,
    env.postgresUrl,
    env.mysqlUrl,
    env.zookeeperUrl,
    env.etcdUrl,
  ];
  const done = [];
  for (const url of urls) {
    // lockkit re-exports core: its error classes are the ones the app sees.
    await runSmoke(() => lockkit.createLockProvider(url), lockkit);
    done.push(url.slice(0, url.indexOf(':') + 1));
  }
  console.log(`createLockProvider ok: ${done.join(' ')}`);
} else {
  const open = await openers[which]();
  console.log(`${which} ok: ${await runSmoke(open, errors)}`);
}
