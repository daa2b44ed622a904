import { describeLockProvider } from '@lockkit/conformance';
import { startRedisCluster } from '@lockkit/testkit';
import { Cluster } from 'ioredis';
import { afterAll } from 'vitest';
import { topologyConformance } from './topology-conformance.js';

// A Cluster of 3 primaries with a replica each, through a redis+cluster:// URL.
const cluster = await startRedisCluster();
const admin = new Cluster(cluster.seeds.map((seed) => `redis://${seed}`));
afterAll(async () => {
  admin.disconnect();
  await cluster.stop();
});

describeLockProvider(
  await topologyConformance(
    'redis, Cluster (3 primaries, minReplicas 1)',
    cluster.url,
    () => admin,
  ),
);
