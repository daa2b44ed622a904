import type { BackendId } from '../backends/backend-ids.js';
import type { Lab } from '../backends/lab.js';
import type { FaultSet } from '../support/command-line.js';
import type { SeededRandom } from '../support/seeded-random.js';
import { placeUnderFaketime } from './chaos-clock-faults.js';
import type { WorkerConfig } from './chaos-messages.js';
import { type ChaosNetwork, ChaosNetworkUnavailable, startChaosNetwork } from './chaos-network.js';
import { networkFaultPlan } from './chaos-network-faults.js';
import type { FaultKind } from './fault-kinds.js';
import type { Placement } from './worker-pool.js';

/** Where a backend run's workers go, and which faults it injects. */
export interface WorkerPlacement {
  /** `--faults network`: each worker's namespace and relay URLs; undefined: plain children. */
  readonly placement: (() => Placement) | undefined;
  readonly network: ChaosNetwork | undefined;
  /** The fault plan of the fault set; undefined for the standard set (see fault-plan.ts). */
  plan(
    random: SeededRandom,
    quick: boolean,
    cycles: number,
    skipped: string[],
  ): FaultKind[] | undefined;
}

/**
 * For `--faults network`: makes the namespaces and relays (one namespace per worker). Where it
 * cannot, says why on the log and in the result's `skipped`, and the run injects nothing.
 */
export async function placeWorkers(
  faults: FaultSet | undefined,
  config: WorkerConfig,
  lab: Lab,
  backend: BackendId,
  workers: number,
  log: (line: string) => void,
): Promise<WorkerPlacement> {
  if (faults === 'clock') {
    return placeUnderFaketime(config, backend, log, lab.serverClockOf(backend));
  }
  if (faults !== 'network') {
    return { placement: undefined, network: undefined, plan: () => undefined };
  }
  let network: ChaosNetwork;
  try {
    network = await startChaosNetwork(config.spec, lab.serversOf(backend), workers);
  } catch (error) {
    if (!(error instanceof ChaosNetworkUnavailable)) throw error;
    const reason = `every network fault (${error.message})`;
    log(`${backend}: network faults skipped: ${error.message}`);
    return {
      placement: undefined,
      network: undefined,
      plan: (_random, _quick, _cycles, skipped) => {
        skipped.push(reason);
        return [];
      },
    };
  }
  log(
    `${backend}: ${workers} workers in network namespaces, servers behind relays on ${network.host}`,
  );
  const spec = network.spec;
  return {
    placement: () => ({ namespace: network.nextNamespace(), config: { ...config, spec } }),
    network,
    plan: (random, quick, cycles, skipped) => {
      const ensemble = backend === 'zookeeper' && lab.zookeeperEnsemble !== undefined;
      if (backend === 'zookeeper' && !ensemble) {
        skipped.push('partition-follower (no ZooKeeper ensemble: network namespaces unavailable)');
      }
      return networkFaultPlan(backend, quick, cycles, random, ensemble);
    },
  };
}
