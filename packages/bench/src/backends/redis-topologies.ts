import {
  type RedisCluster,
  type RedisSentinelSetup,
  startRedisCluster,
  startRedisSentinel,
} from '@lockkit/testkit';
import type { BackendId } from './backend-ids.js';

/** The Redis Cluster and Sentinel setups of a lab; each is started once for both its modes. */
export interface RedisTopologies {
  readonly cluster: RedisCluster | undefined;
  readonly sentinel: RedisSentinelSetup | undefined;
}

/**
 * Starts a Redis Cluster (3 primaries, 3 replicas) if any `redis-cluster*` backend is wanted
 * and a Sentinel setup (a primary, 2 replicas, 3 Sentinels) if any `redis-sentinel*` one is;
 * hands each setup's `stop` to `track` as soon as it runs, so a failed lab stops it.
 */
export async function startRedisTopologies(
  backends: readonly BackendId[],
  startTimeoutMs: number,
  track: (stop: () => Promise<void>) => void,
): Promise<RedisTopologies> {
  const wantsCluster = backends.some((backend) => backend.startsWith('redis-cluster'));
  const wantsSentinel = backends.some((backend) => backend.startsWith('redis-sentinel'));
  const [cluster, sentinel] = await Promise.all([
    wantsCluster
      ? startRedisCluster({ startTimeoutMs }).then((setup) => {
          track(() => setup.stop());
          return setup;
        })
      : undefined,
    wantsSentinel
      ? startRedisSentinel({ startTimeoutMs }).then((setup) => {
          track(() => setup.stop());
          return setup;
        })
      : undefined,
  ]);
  return { cluster, sentinel };
}

/** The one setup `backend` runs on (the other left out), so a fault cannot pick the wrong one. */
export function topologyOf(backend: BackendId, topologies: RedisTopologies): RedisTopologies {
  if (backend.startsWith('redis-cluster'))
    return { cluster: topologies.cluster, sentinel: undefined };
  if (backend.startsWith('redis-sentinel'))
    return { cluster: undefined, sentinel: topologies.sentinel };
  return { cluster: undefined, sentinel: undefined };
}
