import type { ILockProvider } from '@lockkit/core';
import type { ProviderSpec } from './provider-spec.js';

/**
 * Chaos timings. Each backend derives its declared bounds (`capabilities.lostDetectionMs`,
 * `abandonedReleaseMs`) from these; the chaos run reads the bounds from the provider.
 */
export const chaosTimings = {
  /** Redis lease. */
  leaseMs: 1500,
  /** File lease (proper-lockfile's minimum `stale` is 2000 ms). */
  fileLeaseMs: 2000,
  /** Redis per-command deadline. */
  commandTimeoutMs: 200,
  /**
   * The `-ack` Cluster and Sentinel backends' WAIT bound (bench and chaos): a loopback replica
   * acknowledges in well under a millisecond, so 100 ms only runs out when a replica is gone.
   */
  replicaTimeoutMs: 100,
  /** PostgreSQL and MariaDB keepalive of connections that hold locks. */
  keepaliveIntervalMs: 500,
  keepaliveTimeoutMs: 1000,
  /** MariaDB `wait_timeout` of lock connections. */
  sessionTimeoutSeconds: 2,
  /** ZooKeeper session (the lab's server runs tickTime 200 ms, so 400..4000 ms are allowed). */
  zookeeperSessionMs: 2000,
  /** etcd lease TTL (the lab's member allows 1 s), per-request deadline and safety poll. */
  etcdSessionTtlMs: 2000,
  etcdCommandTimeoutMs: 1000,
  etcdPollIntervalMs: 250,
} as const;

/** `minReplicas` of the Redis Cluster and Sentinel backends (0: no acknowledgement). */
const acknowledgedReplicas = {
  'redis-cluster': 0,
  'redis-cluster-ack': 1,
  'redis-sentinel': 0,
  'redis-sentinel-ack': 2,
} as const;

/**
 * Creates the lockkit provider a spec describes. Backend packages are imported on demand, so
 * a chaos worker loads only its own backend.
 */
export async function createProvider(spec: ProviderSpec): Promise<ILockProvider> {
  const chaos = spec.tuning === 'chaos';
  const url = spec.urls[0] ?? '';
  // A variant's options: `recordHolds` every SQL and Redis backend has; `fencing` is MySQL's,
  // `sharedConnections` PostgreSQL's and MySQL's (which takes `spec.options` whole).
  const { fencing: _mysqlOnly, sharedConnections, ...shared } = spec.options ?? {};
  switch (spec.backend) {
    case 'redis':
    case 'redlock': {
      const { createRedisLockProvider } = await import('@lockkit/redis');
      return createRedisLockProvider({
        nodes: [...spec.urls],
        ...shared,
        ...(chaos
          ? { leaseMs: chaosTimings.leaseMs, commandTimeoutMs: chaosTimings.commandTimeoutMs }
          : {}),
      });
    }
    case 'redis-cluster':
    case 'redis-cluster-ack':
    case 'redis-sentinel':
    case 'redis-sentinel-ack': {
      const { createRedisLockProvider } = await import('@lockkit/redis');
      // Every replica of the lock's primary: 1 per Cluster shard, 2 in the Sentinel setup
      // (with fewer, a stale primary's other replica can confirm a grant the promoted one lacks).
      const minReplicas = acknowledgedReplicas[spec.backend];
      return createRedisLockProvider({
        nodes: [url],
        ...(minReplicas > 0
          ? { minReplicas, replicaTimeoutMs: chaosTimings.replicaTimeoutMs }
          : {}),
        ...(chaos
          ? { leaseMs: chaosTimings.leaseMs, commandTimeoutMs: chaosTimings.commandTimeoutMs }
          : {}),
      });
    }
    case 'postgres': {
      const { createPostgresLockProvider } = await import('@lockkit/postgres');
      return createPostgresLockProvider({
        connection: url,
        ...shared,
        ...(sharedConnections === undefined ? {} : { sharedConnections }),
        ...(chaos
          ? {
              keepaliveIntervalMs: chaosTimings.keepaliveIntervalMs,
              keepaliveTimeoutMs: chaosTimings.keepaliveTimeoutMs,
            }
          : {}),
      });
    }
    case 'mysql': {
      const { createMySqlLockProvider } = await import('@lockkit/mysql');
      return createMySqlLockProvider({
        connection: url,
        ...spec.options,
        ...(chaos
          ? {
              keepaliveIntervalMs: chaosTimings.keepaliveIntervalMs,
              keepaliveTimeoutMs: chaosTimings.keepaliveTimeoutMs,
              sessionTimeoutSeconds: chaosTimings.sessionTimeoutSeconds,
            }
          : {}),
      });
    }
    case 'zookeeper': {
      const { createZooKeeperLockProvider } = await import('@lockkit/zookeeper');
      return createZooKeeperLockProvider({
        // An ensemble (`--faults network`): one URL per member, joined into one string.
        connectionString: `zookeeper://${spec.urls.map((each) => each.replace(/^zookeeper:\/\//, '')).join(',')}`,
        ...(chaos
          ? {
              sessionTimeoutMs: chaosTimings.zookeeperSessionMs,
              operationTimeoutMs: chaosTimings.zookeeperSessionMs,
              spinDelayMs: 50,
            }
          : {}),
      });
    }
    case 'etcd': {
      const { createEtcdLockProvider } = await import('@lockkit/etcd');
      return createEtcdLockProvider({
        hosts: url.replace(/^etcd:\/\//, ''),
        ...(chaos
          ? {
              sessionTtlMs: chaosTimings.etcdSessionTtlMs,
              commandTimeoutMs: chaosTimings.etcdCommandTimeoutMs,
              pollIntervalMs: chaosTimings.etcdPollIntervalMs,
            }
          : {}),
      });
    }
    case 'file': {
      const { createFileLockProvider } = await import('@lockkit/file');
      return createFileLockProvider({
        directory: spec.directory,
        ...(chaos ? { leaseMs: chaosTimings.fileLeaseMs } : {}),
      });
    }
  }
}
