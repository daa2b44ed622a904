import type { BackendId } from '../backends/backend-ids.js';
import type { SeededRandom } from '../support/seeded-random.js';
import type { ChaosScenario } from './chaos-messages.js';
import type { FaultKind } from './fault-kinds.js';

const topologyFaults: readonly FaultKind[] = ['kill-primary', 'failover'];
const clusterFaults: readonly FaultKind[] = [...topologyFaults, 'reshard', 'lagging-takeover'];

/**
 * The faults that make sense per backend. The quick run injects each once, in this order.
 * Redis Cluster and Sentinel: topology faults only (the client faults are the one-node ones);
 * resharding and a takeover by a lagging replica only on the Cluster.
 */
const faultsOf: Readonly<Partial<Record<BackendId, readonly FaultKind[]>>> = {
  redis: [
    'kill-holder',
    'stop-holder',
    'drop-connections',
    'pause-server',
    'kill-server',
    'restart-server',
  ],
  redlock: ['kill-holder', 'stop-holder', 'drop-connections', 'pause-minority', 'kill-minority'],
  postgres: [
    'kill-holder',
    'stop-holder',
    'drop-connections',
    'pause-server',
    'restart-server',
    'kill-server',
  ],
  mysql: [
    'kill-holder',
    'stop-holder',
    'drop-connections',
    'pause-server',
    'restart-server',
    'kill-server',
  ],
  zookeeper: [
    'kill-holder',
    'stop-holder',
    'drop-connections',
    'pause-server',
    'restart-server',
    'kill-server',
  ],
  etcd: [
    'kill-holder',
    'stop-holder',
    'drop-connections',
    'pause-server',
    'restart-server',
    'kill-server',
  ],
  file: ['kill-holder', 'stop-holder'],
  'redis-cluster': clusterFaults,
  'redis-cluster-ack': clusterFaults,
  'redis-sentinel': topologyFaults,
  'redis-sentinel-ack': topologyFaults,
};

/** Faults left out of the quick run (CI), to keep it within ~30 s per backend. */
const slowInQuick: Readonly<Partial<Record<BackendId, readonly FaultKind[]>>> = {
  redis: ['restart-server'],
  postgres: ['kill-server'],
  mysql: ['kill-server'],
  zookeeper: ['kill-server'],
  etcd: ['kill-server'],
};

/** The election scenario's quick run: kill the leader, pause the leader past its bound. */
const electionQuick: readonly FaultKind[] = ['kill-holder', 'stop-holder'];

/** The RW-lock and semaphore scenarios' quick run: one holder frozen past its bound. */
const sharedQuick: readonly FaultKind[] = ['stop-holder'];

/**
 * The faults to inject, in order: quick = each applicable fault once (minus the slowest; the
 * election scenario: only the two leader faults; RW locks and semaphores: a frozen holder);
 * otherwise `cycles` rounds of every
 * applicable fault, each round shuffled with the seed.
 */
export function faultPlan(
  backend: BackendId,
  quick: boolean,
  cycles: number,
  random: SeededRandom,
  scenario: ChaosScenario = 'mutex',
): FaultKind[] {
  const all = faultsOf[backend];
  if (!all) throw new Error(`no chaos faults for ${backend} yet`);
  if (quick && scenario === 'election') return [...electionQuick];
  if (quick && (scenario === 'rwlock' || scenario === 'semaphore')) return [...sharedQuick];
  if (quick) return all.filter((kind) => !slowInQuick[backend]?.includes(kind));
  return Array.from({ length: cycles }, () => random.shuffle(all)).flat();
}
