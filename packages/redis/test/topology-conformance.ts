import type { ConformanceOptions } from '@lockkit/conformance';
import { findFreePort } from '@lockkit/testkit';
import type { Cluster, Redis } from 'ioredis';
import { createRedisLockProvider, redisLockKeys } from '../src/index.js';
import { goldenKeys } from './conformance-options.js';
import { deleteHoldOn, testLeaseMs, timeScale } from './support.js';

/**
 * The cross-process cases (child holders, SIGKILLed holders: about 17 s per topology) run only
 * with LOCKKIT_REDIS_TOPOLOGY_FULL=1; the default is the rest of the suite, to keep CI quick.
 */
const full = process.env['LOCKKIT_REDIS_TOPOLOGY_FULL'] === '1';

/** Replicas that must acknowledge grants and extensions in the topology runs. */
export const topologyMinReplicas = 1;

/**
 * Conformance options for a provider on a `redis+cluster://` or `redis+sentinel://` URL, with
 * replica acknowledgement (`minReplicas: 1`). `admin` is a client of the same topology that
 * the lost-lock fault deletes holds through. No `interrupt` hook: pausing the servers of a
 * topology makes it fail over, which is what the topology tests do on purpose instead.
 */
export async function topologyConformance(
  name: string,
  url: string,
  admin: () => Redis | Cluster,
): Promise<ConformanceOptions> {
  // The longest replica wait a 1 s lease allows (a third of it): on a loaded machine a
  // replica's acknowledgement has taken longer than the 250 ms it would default to.
  const options = {
    leaseMs: testLeaseMs,
    commandTimeoutMs: 250,
    minReplicas: topologyMinReplicas,
    replicaTimeoutMs: Math.floor(testLeaseMs / 3),
  };
  const deadPort = await findFreePort();
  const deadUrl = url.startsWith('redis+cluster:')
    ? `redis+cluster://127.0.0.1:${deadPort}`
    : `redis+sentinel://127.0.0.1:${deadPort}/lockkit`;
  return {
    name,
    createProvider: (providerOptions) =>
      createRedisLockProvider({ ...providerOptions, ...options, nodes: url }),
    leaseMs: testLeaseMs,
    faults: {
      loseLock: (handle) => deleteHoldOn(handle, admin()),
      outage: {
        createUnreachableProvider: () => createRedisLockProvider({ ...options, nodes: deadUrl }),
        address: `127.0.0.1:${deadPort}`,
      },
    },
    ...(full && {
      childProvider: {
        module: new URL('./child-provider.ts', import.meta.url).href,
        env: {
          LOCKKIT_TEST_REDIS_NODES: url,
          LOCKKIT_TEST_LEASE_MS: String(testLeaseMs),
          LOCKKIT_TEST_MIN_REPLICAS: String(topologyMinReplicas),
        },
      },
    }),
    goldenKeys: {
      map: (lockName) => redisLockKeys('', 'mutex', lockName).lock,
      expected: goldenKeys,
    },
    timeScale,
  };
}
