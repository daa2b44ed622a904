/**
 * The backends `createLockProvider` knows: which URL schemes select them, which package
 * implements each, which client library that package needs next to it, and which provider
 * options may be written as URL query parameters.
 *
 * @module
 */

/** Backend ids, as `provider.backend` reports them. */
export type BackendId = 'memory' | 'file' | 'redis' | 'postgres' | 'mysql' | 'zookeeper' | 'etcd';

/** How a query parameter's text becomes an option value. */
export type OptionType = 'string' | 'number' | 'boolean';

/** What lockkit knows about one backend. */
export interface BackendInfo {
  readonly id: BackendId;
  /** The package that implements it. */
  readonly packageName: string;
  /** The name of the factory the package exports. */
  readonly factory: string;
  /** Everything a user installs for this backend (package first, then its client library). */
  readonly packages: readonly string[];
  /** Provider options that may be given as query parameters, with their types. */
  readonly queryOptions: Readonly<Record<string, OptionType>>;
  /** Provider options the URL itself supplies; passing them in `options` is an error. */
  readonly urlOwnedOptions: readonly string[];
  /** Whether other query parameters are left in the URL for the client library. */
  readonly passesQueryToClient: boolean;
}

/** Query options every provider takes (core's provider options). */
const providerQuery = { namespace: 'string', owner: 'string' } as const;

/** Every backend, by id. */
export const backends: Readonly<Record<BackendId, BackendInfo>> = Object.freeze({
  memory: {
    id: 'memory',
    packageName: '@lockkit/core',
    factory: 'createMemoryLockProvider',
    packages: ['@lockkit/core'],
    queryOptions: { ...providerQuery },
    urlOwnedOptions: [],
    passesQueryToClient: false,
  },
  file: {
    id: 'file',
    packageName: '@lockkit/file',
    factory: 'createFileLockProvider',
    packages: ['@lockkit/file'],
    queryOptions: {
      ...providerQuery,
      leaseMs: 'number',
      autoExtend: 'boolean',
      pollIntervalMs: 'number',
      io: 'string',
    },
    urlOwnedOptions: ['directory'],
    passesQueryToClient: false,
  },
  redis: {
    id: 'redis',
    packageName: '@lockkit/redis',
    factory: 'createRedisLockProvider',
    packages: ['@lockkit/redis', 'ioredis'],
    queryOptions: {
      ...providerQuery,
      leaseMs: 'number',
      autoExtend: 'boolean',
      commandTimeoutMs: 'number',
      pollIntervalMs: 'number',
      minReplicas: 'number',
      replicaTimeoutMs: 'number',
      recordHolds: 'boolean',
    },
    urlOwnedOptions: ['nodes'],
    passesQueryToClient: true,
  },
  postgres: {
    id: 'postgres',
    packageName: '@lockkit/postgres',
    factory: 'createPostgresLockProvider',
    packages: ['@lockkit/postgres', 'pg'],
    queryOptions: {
      ...providerQuery,
      sharedConnections: 'number',
      maxWaitConnections: 'number',
      idleTimeoutMs: 'number',
      keepaliveIntervalMs: 'number',
      keepaliveTimeoutMs: 'number',
      connectTimeoutMs: 'number',
      pollIntervalMs: 'number',
      fencingSequence: 'string',
      createFencingSequence: 'boolean',
      applicationName: 'string',
      holdsTable: 'string',
      recordHolds: 'boolean',
    },
    urlOwnedOptions: ['connection', 'pool'],
    passesQueryToClient: true,
  },
  mysql: {
    id: 'mysql',
    packageName: '@lockkit/mysql',
    factory: 'createMySqlLockProvider',
    packages: ['@lockkit/mysql', 'mysql2'],
    queryOptions: {
      ...providerQuery,
      sharedConnections: 'number',
      idleConnections: 'number',
      keepaliveIntervalMs: 'number',
      keepaliveTimeoutMs: 'number',
      connectTimeoutMs: 'number',
      sessionTimeoutSeconds: 'number',
      fencing: 'string',
      fencingTable: 'string',
      maxReaders: 'number',
      safetyPollMs: 'number',
      recordHolds: 'boolean',
    },
    urlOwnedOptions: ['connection', 'pool'],
    passesQueryToClient: true,
  },
  zookeeper: {
    id: 'zookeeper',
    packageName: '@lockkit/zookeeper',
    factory: 'createZooKeeperLockProvider',
    packages: ['@lockkit/zookeeper'],
    queryOptions: {
      ...providerQuery,
      basePath: 'string',
      assumePathExists: 'boolean',
      sessionTimeoutMs: 'number',
      operationTimeoutMs: 'number',
      connectTimeoutMs: 'number',
      spinDelayMs: 'number',
      parentCleanupDelayMs: 'number',
    },
    urlOwnedOptions: ['connectionString', 'client'],
    passesQueryToClient: false,
  },
  etcd: {
    id: 'etcd',
    packageName: '@lockkit/etcd',
    factory: 'createEtcdLockProvider',
    packages: ['@lockkit/etcd'],
    queryOptions: {
      ...providerQuery,
      sessionTtlMs: 'number',
      commandTimeoutMs: 'number',
      pollIntervalMs: 'number',
    },
    urlOwnedOptions: ['hosts', 'client'],
    passesQueryToClient: false,
  },
} satisfies Record<BackendId, BackendInfo>);

/** URL scheme (lower case, without the colon) → backend. */
export const schemes: Readonly<Record<string, BackendId>> = Object.freeze({
  memory: 'memory',
  file: 'file',
  redis: 'redis',
  rediss: 'redis',
  'redis+cluster': 'redis',
  'redis+sentinel': 'redis',
  postgres: 'postgres',
  postgresql: 'postgres',
  mysql: 'mysql',
  mariadb: 'mysql',
  zookeeper: 'zookeeper',
  zk: 'zookeeper',
  etcd: 'etcd',
  etcds: 'etcd',
});
