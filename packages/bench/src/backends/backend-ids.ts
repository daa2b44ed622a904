/** The backends the bench and the chaos run cover by default, in the order they report them. */
export const backendIds = [
  'redis',
  'redlock',
  'postgres',
  'mysql',
  'zookeeper',
  'etcd',
  'file',
] as const;

/**
 * Redis Cluster and Sentinel, each without and with replica acknowledgement (`-ack`:
 * `minReplicas` = every replica of the primary: 1 on the Cluster, 2 on Sentinel). Selected only by name (`--backends redis-cluster,…`): their servers are
 * six and five processes, too many for the default run on 2 cores.
 */
export const topologyBackendIds = [
  'redis-cluster',
  'redis-cluster-ack',
  'redis-sentinel',
  'redis-sentinel-ack',
] as const;

/** Every backend a `--backends` filter may name. */
export const selectableBackendIds: readonly BackendId[] = [...backendIds, ...topologyBackendIds];

/** A backend id. `redlock` is the Redis backend over several independent nodes. */
export type BackendId = (typeof backendIds)[number] | (typeof topologyBackendIds)[number];

/** A Redis Cluster or Sentinel backend. */
export type TopologyBackendId = (typeof topologyBackendIds)[number];

/** Whether `name` is a {@link BackendId}. */
export function isBackendId(name: string): name is BackendId {
  return (selectableBackendIds as readonly string[]).includes(name);
}

/** Whether `backend` is a Redis Cluster or Sentinel backend. */
export function isTopologyBackend(backend: BackendId): backend is TopologyBackendId {
  return (topologyBackendIds as readonly string[]).includes(backend);
}

/** How a backend is called in tables. */
export const backendLabels: Readonly<Record<BackendId, string>> = {
  redis: 'Redis (1 node)',
  redlock: 'Redis Redlock',
  postgres: 'PostgreSQL',
  mysql: 'MariaDB',
  zookeeper: 'ZooKeeper',
  etcd: 'etcd',
  file: 'file system',
  'redis-cluster': 'Redis Cluster',
  'redis-cluster-ack': 'Redis Cluster, minReplicas 1',
  'redis-sentinel': 'Redis Sentinel',
  'redis-sentinel-ack': 'Redis Sentinel, minReplicas 2',
};
