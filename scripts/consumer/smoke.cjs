// CommonJS smoke: the same as smoke.mjs, loading every package with require().
'use strict';
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { LockError, LockTimeoutError } = require('@lockkit/core');
const { runSmoke } = require('./smoke-steps.cjs');

const env = JSON.parse(process.env.LOCKKIT_CONSUMER_SERVERS);
const directory = mkdtempSync(
  join(process.env.LOCKKIT_CONSUMER_TMP ?? tmpdir(), 'lockkit-consumer-'),
);
const errors = { LockError, LockTimeoutError };

const openers = {
  file: () => {
    const { createFileLockProvider } = require('@lockkit/file');
    return () => createFileLockProvider({ directory });
  },
  redis: () => {
    const { createRedisLockProvider } = require('@lockkit/redis');
    return () => createRedisLockProvider({ nodes: env.redisUrls[0] });
  },
  redlock: () => {
    const { createRedisLockProvider } = require('@lockkit/redis');
    return () => createRedisLockProvider({ nodes: env.redisUrls });
  },
  postgres: () => {
    const { createPostgresLockProvider } = require('@lockkit/postgres');
    return () => createPostgresLockProvider({ connection: env.postgresUrl });
  },
  mysql: () => {
    const { createMySqlLockProvider } = require('@lockkit/mysql');
    return () => createMySqlLockProvider({ connection: env.mysqlUrl });
  },
  zookeeper: () => {
    const { createZooKeeperLockProvider } = require('@lockkit/zookeeper');
    return () => createZooKeeperLockProvider({ connectionString: new URL(env.zookeeperUrl).host });
  },
  etcd: () => {
    const { createEtcdLockProvider } = require('@lockkit/etcd');
    return () => createEtcdLockProvider({ hosts: new URL(env.etcdUrl).host });
  },
};

async function main(which) {
  // Each package must come from its CommonJS build (a .js file under dist/cjs).
  for (const name of ['@lockkit/core', 'lockkit']) {
    const file = require.resolve(name);
    if (!file.includes(`${require('node:path').sep}cjs${require('node:path').sep}`)) {
      throw new Error(`${name} resolved to ${file}, not its CommonJS build`);
    }
  }
  if (which === 'url') {
    const lockkit = require('lockkit');
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
      await runSmoke(() => lockkit.createLockProvider(url), lockkit);
      done.push(url.slice(0, url.indexOf(':') + 1));
    }
    console.log(`createLockProvider ok: ${done.join(' ')}`);
  } else {
    console.log(`${which} ok: ${await runSmoke(openers[which](), errors)}`);
  }
}

main(process.argv[2]).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
