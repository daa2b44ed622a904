import { describeLockProvider } from '@lockkit/conformance';
import { startRedisSentinel } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { topologyConformance } from './topology-conformance.js';

// A primary with 2 replicas and 3 Sentinels, through a redis+sentinel:// URL.
const setup = await startRedisSentinel();
const admin = new Redis({
  sentinels: setup.sentinels.map((sentinel) => ({ host: sentinel.host, port: sentinel.port })),
  name: setup.masterName,
});
afterAll(async () => {
  admin.disconnect();
  await setup.stop();
});

describeLockProvider(
  await topologyConformance(
    'redis, Sentinel (primary + 2 replicas, minReplicas 1)',
    setup.url,
    () => admin,
  ),
);
