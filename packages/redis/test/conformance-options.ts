import type { ConformanceOptions } from '@lockkit/conformance';
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

/** Conformance options for a provider on `nodes` (1 = single node, N > 1 = Redlock). */
export function redisConformance(name: string, nodes: readonly string[]): ConformanceOptions {
  return {
    name,
    createProvider: () =>
      createRedisLockProvider({ nodes, leaseMs: testLeaseMs, commandTimeoutMs: 250 }),
    faults: { loseLock: (handle) => deleteHold(handle, nodes) },
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
