import type { ConformanceOptions, OutageFaults } from '@lockkit/conformance';
import { findFreePort, type ServerHandle } from '@lockkit/testkit';
import { createRedisLockProvider, redisLockKeys } from '../src/index.js';
import { deleteHold, testLeaseMs, timeScale } from './support.js';

/** Pinned name→key mapping (version 1): changing any of these is a breaking change. */
export const goldenKeys: readonly (readonly [string, string])[] = [
  ['', 'lockkit:{mutex.736axzszd6ujbspwk7htfwyv5m}'],
  ['orders', 'lockkit:{mutex.orders.ozhwpo7m6epkhsxcm7eoaeklqv}'],
  ['Orders', 'lockkit:{mutex.Orders.5efnxio6dak2qnfvhbd4ttiphm}'],
  ['a/b/../c', 'lockkit:{mutex.a_b____c.peiljszaukurtrswwvt5raobjo}'],
  ['Ünïcode 名前', 'lockkit:{mutex._n_code___.e7radx5i4etih37y72notn3xek}'],
  ['nul\0byte', 'lockkit:{mutex.nul_byte.gxbp5sjmpadodhtok3j2jr37ph}'],
  [
    "x'); DROP TABLE locks;--",
    'lockkit:{mutex.x____DROP_TABLE_locks_--.73j4zdzjshokz5wf6jegrthtwz}',
  ],
  ['{tag}', 'lockkit:{mutex._tag_.ryojdz26y3br7iq7er2p366mqz}'],
];

/**
 * Conformance options for a provider on `servers` (1 = single node, N > 1 = Redlock). With
 * `controllable` servers (started by the test file, so pausing them disturbs no other file)
 * the held-lock outage case pauses a majority of them.
 */
export async function redisConformance(
  name: string,
  servers: readonly ServerHandle[],
  controllable = false,
): Promise<ConformanceOptions> {
  const nodes = servers.map((server) => server.url);
  const options = { leaseMs: testLeaseMs, commandTimeoutMs: 250 };
  // Ports where nothing listens: every connection is refused.
  const deadPorts: number[] = [];
  for (const _ of nodes) deadPorts.push(await findFreePort());
  const majority = servers.slice(0, Math.floor(servers.length / 2) + 1);
  const outage: OutageFaults = {
    createUnreachableProvider: () =>
      createRedisLockProvider({
        ...options,
        nodes: deadPorts.map((port) => `redis://127.0.0.1:${port}`),
      }),
    address: `127.0.0.1:${deadPorts[0]}`,
    ...(controllable && {
      interrupt: async () => {
        for (const server of majority) await server.pause();
        return async () => {
          for (const server of majority) await server.resume();
        };
      },
    }),
  };
  return {
    name,
    createProvider: (providerOptions) =>
      createRedisLockProvider({ ...providerOptions, ...options, nodes }),
    leaseMs: testLeaseMs,
    faults: { loseLock: (handle) => deleteHold(handle, nodes), outage },
    childProvider: {
      module: new URL('./child-provider.ts', import.meta.url).href,
      env: {
        LOCKKIT_TEST_REDIS_NODES: nodes.join(','),
        LOCKKIT_TEST_LEASE_MS: String(testLeaseMs),
      },
    },
    goldenKeys: {
      map: (lockName) => redisLockKeys('', 'mutex', lockName).lock,
      expected: goldenKeys,
    },
    timeScale,
  };
}
