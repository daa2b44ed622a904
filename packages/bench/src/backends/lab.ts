import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NetworkNamespacesUnavailableError,
  type ServerHandle,
  startEtcd,
  startMariaDb,
  startPostgres,
  startRedisServers,
  startZooKeeper,
  startZooKeeperEnsemble,
  type ZooKeeperEnsemble,
} from '@lockkit/testkit';
import { type BackendId, isTopologyBackend } from './backend-ids.js';
import type { ProviderSpec, ProviderTuning } from './provider-spec.js';
import { type RedisTopologies, startRedisTopologies } from './redis-topologies.js';
import { type ServerClock, serverClocks } from './server-clocks.js';

/**
 * What the servers are for: their settings differ (see {@link startLab}). `counts` is the
 * bench's servers with PostgreSQL's `pg_stat_statements` loaded (request counts only: it
 * costs time per statement); `scale` is the bench's servers with room for 100 000 advisory
 * locks on PostgreSQL (`pnpm bench --scale`).
 */
export type LabPurpose = 'bench' | 'chaos' | 'counts' | 'scale';

/** Throwaway servers (and a lock directory) for a set of backends. */
export interface Lab {
  readonly purpose: LabPurpose;
  /** The backends this lab serves. */
  readonly backends: readonly BackendId[];
  /** The lock directory of the file backend (removed by `stop()`). */
  readonly directory: string;
  /** The servers a backend talks to (empty for `file`). */
  serversOf(backend: BackendId): readonly ServerHandle[];
  /** The Redis Cluster and Sentinel setups (undefined where not asked for). */
  readonly topologies: RedisTopologies;
  /** `zookeeperEnsemble`: the 3-member ensemble `zookeeper` runs on (undefined: one server). */
  readonly zookeeperEnsemble: ZooKeeperEnsemble | undefined;
  /** `serverClocks`: the clock file a backend's servers run with, or why they have none. */
  serverClockOf(backend: BackendId): ServerClock;
  /** The provider spec of a backend on this lab's servers. */
  specFor(backend: BackendId, tuning: ProviderTuning): ProviderSpec;
  /** Stops every server and removes the directory. */
  stop(): Promise<void>;
}

/** PostgreSQL's own defaults where the test kit trades durability for speed. */
const durablePostgres = {
  fsync: 'on',
  full_page_writes: 'on',
  wal_level: 'replica',
  max_wal_senders: '10',
};
/** MariaDB's own defaults where the test kit trades durability for speed. */
const durableMariaDb = ['--innodb-flush-log-at-trx-commit=1', '--innodb-doublewrite=1'];

/** Redlock node count: 3 for the bench (the common deployment), 5 for chaos (kill 2 of 5). */
const redlockNodes: Readonly<Record<LabPurpose, number>> = {
  bench: 3,
  chaos: 5,
  counts: 3,
  scale: 3,
};

/**
 * Starts, in parallel, the throwaway servers `backends` need, through `@lockkit/testkit`
 * (never the system services, never `LOCKKIT_*` servers: faults need servers we control).
 *
 * - `redis`: one node. For chaos with AOF and `appendfsync always`, because @lockkit/redis
 *   documents that fencing counters survive a restart only with persistence; the bench runs
 *   it without persistence, as the peers' own benchmarks do.
 * - `redlock`: independent nodes without persistence (Redlock's "delayed restart" model).
 * - `postgres`: for the bench with room for 10 000 advisory locks on one connection.
 * - `zookeeper`: tickTime 200 ms so chaos can use 2 s sessions.
 * - `etcd`: one member, heartbeat 50 ms and election 500 ms, so chaos can use 2 s leases.
 * - The bench runs PostgreSQL, MariaDB and ZooKeeper with their durable defaults (fsync on
 *   commit), as users run them; chaos keeps the test kit's faster settings.
 *
 * `serverClocks` (`pnpm chaos --faults clock`): every server whose clock libfaketime can move
 * starts under it (see server-clocks.ts). `zookeeperEnsemble` (`--faults network`): ZooKeeper
 * runs as a 3-member ensemble in network namespaces, so that a follower can be cut off.
 */
export async function startLab(
  backends: readonly BackendId[],
  purpose: LabPurpose,
  options: { readonly serverClocks?: boolean; readonly zookeeperEnsemble?: boolean } = {},
): Promise<Lab> {
  const wants = (backend: BackendId): boolean => backends.includes(backend);
  const base = { useEnvironment: false, startTimeoutMs: 90_000 } as const;
  // `--faults clock`: the servers start under libfaketime (see server-clocks.ts).
  const clocks = serverClocks(options.serverClocks === true);
  const under = (backend: BackendId) => {
    const environment = clocks.environmentOf(backend);
    return environment ? { ...base, environment } : base;
  };
  const directory = mkdtempSync(join(tmpdir(), `lockkit-${purpose}-`));
  // Also on SIGINT/SIGTERM (the mains call process.exit): the servers have the test kit's hooks.
  // Workers SIGKILLed a moment ago may still be finishing a file operation: retry, never throw.
  const removeDirectory = (): void => {
    try {
      rmSync(directory, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    } catch {
      // Left for the OS's temp cleanup.
    }
  };
  process.once('exit', removeDirectory);
  const started: Pick<ServerHandle, 'stop'>[] = [];
  const track = async <T extends ServerHandle | ServerHandle[]>(start: Promise<T>): Promise<T> => {
    const result = await start;
    started.push(...(Array.isArray(result) ? result : [result]));
    return result;
  };
  const durable = purpose !== 'chaos';
  const persistence =
    purpose === 'chaos' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ([] as string[]);
  const results = await Promise.allSettled([
    wants('redis')
      ? track(startRedisServers(1, { ...under('redis'), extraArguments: persistence }))
      : Promise.resolve([]),
    wants('redlock')
      ? track(startRedisServers(redlockNodes[purpose], under('redlock')))
      : Promise.resolve([]),
    wants('postgres')
      ? track(
          startPostgres({
            ...under('postgres'),
            settings: durable
              ? {
                  ...durablePostgres,
                  max_locks_per_transaction: '256',
                  max_connections: '300',
                  ...(purpose === 'counts'
                    ? { shared_preload_libraries: 'pg_stat_statements' }
                    : {}),
                }
              : {},
          }),
        )
      : Promise.resolve(undefined),
    wants('mysql')
      ? track(startMariaDb({ ...under('mysql'), extraArguments: durable ? durableMariaDb : [] }))
      : Promise.resolve(undefined),
    wants('zookeeper') && options.zookeeperEnsemble === true
      ? startEnsemble(base.startTimeoutMs, (stop) => started.push({ stop }))
      : wants('zookeeper')
        ? track(
            startZooKeeper({
              ...under('zookeeper'),
              tickTimeMs: 200,
              extraConfig: durable ? { forceSync: 'yes' } : {},
              // 100 000 held locks are 100 000 live nodes: more than the tests' 128 MiB heap.
              ...(purpose === 'scale' ? { maxHeapMb: 1024 } : {}),
            }),
          )
        : Promise.resolve(undefined),
    wants('etcd') ? track(startEtcd(under('etcd'))) : Promise.resolve(undefined),
    startRedisTopologies(backends, base.startTimeoutMs, (stop) => started.push({ stop })),
  ]);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.allSettled(started.map((server) => server.stop()));
    removeDirectory();
    process.removeListener('exit', removeDirectory);
    throw failure.reason;
  }
  const value = <T>(index: number): T =>
    (results[index] as PromiseFulfilledResult<unknown>).value as T;
  const redis = value<ServerHandle[]>(0);
  const redlock = value<ServerHandle[]>(1);
  const postgres = value<ServerHandle | undefined>(2);
  const mariadb = value<ServerHandle | undefined>(3);
  const zookeeperResult = value<ServerHandle | ZooKeeperEnsemble | undefined>(4);
  const zookeeperEnsemble =
    zookeeperResult !== undefined && 'members' in zookeeperResult ? zookeeperResult : undefined;
  const zookeeper = zookeeperEnsemble ? undefined : (zookeeperResult as ServerHandle | undefined);
  const etcd = value<ServerHandle | undefined>(5);
  const topologies = value<RedisTopologies>(6);
  const serversOf = (backend: BackendId): readonly ServerHandle[] => {
    const list: Record<BackendId, readonly (ServerHandle | undefined)[]> = {
      redis,
      redlock,
      postgres: [postgres],
      mysql: [mariadb],
      zookeeper: zookeeperEnsemble ? zookeeperEnsemble.members : [zookeeper],
      etcd: [etcd],
      file: [],
      'redis-cluster': topologies.cluster?.nodes ?? [],
      'redis-cluster-ack': topologies.cluster?.nodes ?? [],
      'redis-sentinel': topologies.sentinel?.servers ?? [],
      'redis-sentinel-ack': topologies.sentinel?.servers ?? [],
    };
    return list[backend].filter((server): server is ServerHandle => server !== undefined);
  };
  return {
    purpose,
    backends,
    directory,
    serversOf,
    topologies,
    zookeeperEnsemble,
    serverClockOf: (backend) => clocks.of(backend),
    specFor(backend, tuning) {
      const topologyUrl = backend.startsWith('redis-cluster')
        ? topologies.cluster?.url
        : topologies.sentinel?.url;
      return {
        backend,
        urls: isTopologyBackend(backend)
          ? [topologyUrl ?? '']
          : serversOf(backend).map((server) => server.url),
        directory: join(directory, 'locks'),
        tuning,
      };
    },
    async stop() {
      await Promise.allSettled(started.map((server) => server.stop()));
      removeDirectory();
      process.removeListener('exit', removeDirectory);
    },
  };
}

/**
 * `--faults network`: ZooKeeper as a 3-member ensemble, each member in a network namespace of
 * its own (so that a follower can be cut off); one server where namespaces are unavailable.
 */
async function startEnsemble(
  startTimeoutMs: number,
  onStarted: (stop: () => Promise<void>) => void,
): Promise<ZooKeeperEnsemble | ServerHandle> {
  try {
    const ensemble = await startZooKeeperEnsemble(3, { startTimeoutMs, tickTimeMs: 200 });
    onStarted(() => ensemble.stop());
    return ensemble;
  } catch (error) {
    if (!(error instanceof NetworkNamespacesUnavailableError)) throw error;
    const server = await startZooKeeper({ useEnvironment: false, startTimeoutMs, tickTimeMs: 200 });
    onStarted(() => server.stop());
    return server;
  }
}
