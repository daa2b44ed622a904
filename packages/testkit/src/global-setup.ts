import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { type EtcdServerOptions, startEtcd } from './etcd-server.js';
import { type MariaDbServerOptions, startMariaDb } from './mariadb-server.js';
import { type PostgresServerOptions, startPostgres } from './postgres-server.js';
import { type RedisServerOptions, startRedisServers } from './redis-server.js';
import type { ServerHandle, ServerInfo } from './server-handle.js';
import { startZooKeeper, type ZooKeeperServerOptions } from './zookeeper-server.js';

/** Which servers a test run needs; `true` or an options object starts one of that kind. */
export interface ServerRequest {
  /** How many independent Redis servers (Redlock wants 3 or 5). */
  readonly redis?: number;
  readonly redisOptions?: RedisServerOptions;
  readonly postgres?: boolean | PostgresServerOptions;
  readonly mariadb?: boolean | MariaDbServerOptions;
  readonly zookeeper?: boolean | ZooKeeperServerOptions;
  /** One single-member etcd (start clusters in the test file: `startEtcdCluster`). */
  readonly etcd?: boolean | EtcdServerOptions;
}

/** What the global setup hands to test files through `inject('lockkitServers')`. */
export interface LockkitServers {
  /** One URL per Redis server (empty when none was requested). */
  readonly redisUrls: readonly string[];
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly postgresUrl?: string;
  /** `mysql://root@127.0.0.1:PORT/test` */
  readonly mysqlUrl?: string;
  /** `zookeeper://127.0.0.1:PORT` */
  readonly zookeeperUrl?: string;
  /** `etcd://127.0.0.1:PORT` */
  readonly etcdUrl?: string;
  /** Full descriptions, for {@link attachServer} (fault hooks from a test file). */
  readonly servers: {
    readonly redis: readonly ServerInfo[];
    readonly postgres?: ServerInfo;
    readonly mariadb?: ServerInfo;
    readonly zookeeper?: ServerInfo;
    readonly etcd?: ServerInfo;
  };
}

declare module 'vitest' {
  /** Typed `inject('lockkitServers')` for packages that use {@link setupServers}. */
  export interface ProvidedContext {
    lockkitServers: LockkitServers;
  }
}

/** Servers started by {@link startServers}. */
export interface StartedServers {
  readonly redis: readonly ServerHandle[];
  readonly postgres?: ServerHandle;
  readonly mariadb?: ServerHandle;
  readonly zookeeper?: ServerHandle;
  readonly etcd?: ServerHandle;
  /** Their serialisable description. */
  describe(): LockkitServers;
  /** Stops them all (in parallel); rejects with the first failure after trying every one. */
  stop(): Promise<void>;
}

function optionsOf<Options extends object>(
  request: boolean | Options | undefined,
): Options | undefined {
  if (request === undefined || request === false) return undefined;
  return request === true ? ({} as Options) : request;
}

async function stopAll(handles: readonly ServerHandle[]): Promise<void> {
  const results = await Promise.allSettled(handles.map((handle) => handle.stop()));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

/**
 * Starts the requested servers in parallel. If one fails to start, the others are stopped and
 * the first failure is thrown.
 */
export async function startServers(request: ServerRequest): Promise<StartedServers> {
  const postgresOptions = optionsOf(request.postgres);
  const mariaDbOptions = optionsOf(request.mariadb);
  const zooKeeperOptions = optionsOf(request.zookeeper);
  const etcdOptions = optionsOf(request.etcd);
  const redisCount = request.redis ?? 0;
  const [redis, postgres, mariadb, zookeeper, etcd] = await Promise.allSettled([
    redisCount > 0 ? startRedisServers(redisCount, request.redisOptions) : Promise.resolve([]),
    postgresOptions && startPostgres(postgresOptions),
    mariaDbOptions && startMariaDb(mariaDbOptions),
    zooKeeperOptions && startZooKeeper(zooKeeperOptions),
    etcdOptions && startEtcd(etcdOptions),
  ]);
  const started: ServerHandle[] = [];
  const failures: unknown[] = [];
  for (const result of [redis, postgres, mariadb, zookeeper, etcd]) {
    if (result.status === 'rejected') failures.push(result.reason);
    else if (Array.isArray(result.value)) started.push(...result.value);
    else if (result.value !== undefined) started.push(result.value);
  }
  if (failures.length > 0) {
    await stopAll(started).catch(() => undefined);
    throw failures[0];
  }
  const value = <Handle>(result: PromiseSettledResult<Handle>): Handle | undefined =>
    result.status === 'fulfilled' ? result.value : undefined;
  const handles = {
    redis: value(redis) ?? [],
    postgres: value(postgres),
    mariadb: value(mariadb),
    zookeeper: value(zookeeper),
    etcd: value(etcd),
  };
  return {
    redis: handles.redis,
    ...(handles.postgres === undefined ? {} : { postgres: handles.postgres }),
    ...(handles.mariadb === undefined ? {} : { mariadb: handles.mariadb }),
    ...(handles.zookeeper === undefined ? {} : { zookeeper: handles.zookeeper }),
    ...(handles.etcd === undefined ? {} : { etcd: handles.etcd }),
    describe: () => ({
      redisUrls: handles.redis.map((handle) => handle.url),
      ...(handles.postgres === undefined ? {} : { postgresUrl: handles.postgres.url }),
      ...(handles.mariadb === undefined ? {} : { mysqlUrl: handles.mariadb.url }),
      ...(handles.zookeeper === undefined ? {} : { zookeeperUrl: handles.zookeeper.url }),
      ...(handles.etcd === undefined ? {} : { etcdUrl: handles.etcd.url }),
      servers: {
        redis: handles.redis.map((handle) => handle.describe()),
        ...(handles.postgres === undefined ? {} : { postgres: handles.postgres.describe() }),
        ...(handles.mariadb === undefined ? {} : { mariadb: handles.mariadb.describe() }),
        ...(handles.zookeeper === undefined ? {} : { zookeeper: handles.zookeeper.describe() }),
        ...(handles.etcd === undefined ? {} : { etcd: handles.etcd.describe() }),
      },
    }),
    stop: () => stopAll(started),
  };
}

/**
 * For a vitest `globalSetup` file: starts the requested servers once per test run, provides
 * their description as `lockkitServers` (read it with `inject('lockkitServers')`), and returns
 * the teardown that stops them.
 *
 * @example
 * ```ts
 * // test/global-setup.ts
 * import { setupServers } from '@lockkit/testkit';
 * import type { TestProject } from 'vitest/node';
 * export default (project: TestProject) => setupServers(project, { redis: 5, postgres: true });
 * ```
 */
export async function setupServers(
  project: TestProject,
  request: ServerRequest,
): Promise<() => Promise<void>> {
  const started = await startServers(request);
  project.provide('lockkitServers', started.describe());
  return () => started.stop();
}
