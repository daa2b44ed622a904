export type { TopologyFaultOutcome } from './topology-support.js';

import { redisLockKeys } from '@lockkit/redis';
import type { ServerHandle } from '@lockkit/testkit';
import type { RedisTopologies } from '../backends/redis-topologies.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { SeededRandom } from '../support/seeded-random.js';
import type { ChaosLedger } from './chaos-ledger.js';
import { laggingTakeover, reshardLockSlot } from './cluster-faults.js';
import type { FaultKind } from './fault-kinds.js';
import { awaitLinkedReplica, type TopologyFaultOutcome } from './topology-support.js';

/** The primary that holds `lock`'s keys now (a chaos mutex: default namespace). */
function primaryOf(topologies: RedisTopologies, lock: string): Promise<ServerHandle> {
  if (topologies.cluster)
    return topologies.cluster.primaryOf(redisLockKeys('', 'mutex', lock).lock);
  if (topologies.sentinel) return topologies.sentinel.primary();
  throw new Error('no Redis Cluster or Sentinel in this lab');
}

/**
 * SIGKILLs the primary that holds `lock` the moment a worker enters a critical section on it
 * (the grant was just written there, maybe not yet replicated), waits for the promotion, then
 * restarts the killed node and waits until it has rejoined as a replica, so the next fault
 * finds a replica again.
 */
export async function killPrimaryAtGrant(
  topologies: RedisTopologies,
  ledger: ChaosLedger,
  lock: string,
): Promise<TopologyFaultOutcome> {
  const primary = await primaryOf(topologies, lock);
  let promotion: Promise<ServerHandle> | undefined;
  let startedAt = 0;
  const strike = (): void => {
    startedAt = monotonicMs();
    promotion = topologies.cluster
      ? topologies.cluster.killPrimary(primary)
      : topologies.sentinel!.killPrimary();
  };
  await ledger.atNextEnter((grant) => grant.lock === lock, strike, 3000);
  if (!promotion) strike();
  const promoted = await promotion!;
  const promotedAt = monotonicMs();
  await primary.restart();
  await awaitLinkedReplica(primary);
  // Over once the shard has all its replicas again: with minReplicas = the replica count no
  // grant can be acknowledged before (the promoted node lacks one until the killed one rejoins).
  const clearedAt = monotonicMs();
  return {
    description: `SIGKILL primary ${primary.port} at a grant of ${lock}; replica ${promoted.port} promoted after ${Math.round(promotedAt - startedAt)} ms; the old primary rejoined as its replica ${Math.round(clearedAt - promotedAt)} ms later`,
    startedAt,
    clearedAt,
  };
}

/**
 * CLUSTER FAILOVER on the replica of `lock`'s primary (coordinated: the replica catches up
 * first), or SENTINEL FAILOVER (not coordinated: the old primary takes writes until the
 * Sentinels demote it); resolves once the new primary is agreed on.
 */
export async function forceFailover(
  topologies: RedisTopologies,
  lock: string,
): Promise<TopologyFaultOutcome> {
  const primary = await primaryOf(topologies, lock);
  const startedAt = monotonicMs();
  const promoted = topologies.cluster
    ? await topologies.cluster.failover(primary)
    : await topologies.sentinel!.failover();
  const promotedAt = monotonicMs();
  // Sentinel demotes the old primary only some 10 s later (it takes writes until then): the
  // fault is over once it has rejoined as a replica, as after a kill (with minReplicas equal
  // to the replica count no grant can be confirmed before).
  if (topologies.sentinel) await awaitLinkedReplica(primary);
  const clearedAt = monotonicMs();
  const how = topologies.cluster ? 'CLUSTER FAILOVER' : 'SENTINEL FAILOVER';
  const rejoined = topologies.sentinel
    ? `; the old primary rejoined as a replica ${Math.round(clearedAt - promotedAt)} ms later`
    : '';
  return {
    description: `${how}: ${primary.port} → ${promoted.port} in ${Math.round(promotedAt - startedAt)} ms${rejoined}`,
    startedAt,
    clearedAt,
  };
}

const topologyFaultKinds = ['kill-primary', 'failover', 'reshard', 'lagging-takeover'] as const;

/** A Redis Cluster or Sentinel fault (the others are for single servers and workers). */
export function isTopologyFault(kind: FaultKind): kind is (typeof topologyFaultKinds)[number] {
  return (topologyFaultKinds as readonly FaultKind[]).includes(kind);
}

/** Injects a topology fault on one of `context.locks` (picked with the seed). */
export function injectTopologyFault(
  kind: (typeof topologyFaultKinds)[number],
  context: {
    readonly topologies: RedisTopologies;
    readonly ledger: ChaosLedger;
    readonly locks: readonly string[];
    readonly random: SeededRandom;
  },
): Promise<TopologyFaultOutcome> {
  const { topologies, ledger } = context;
  const lock = context.random.pick(context.locks);
  if (kind === 'kill-primary') return killPrimaryAtGrant(topologies, ledger, lock);
  if (kind === 'failover') return forceFailover(topologies, lock);
  if (!topologies.cluster) throw new Error(`${kind} needs a Redis Cluster`);
  return kind === 'reshard'
    ? reshardLockSlot(topologies.cluster, lock)
    : laggingTakeover(topologies.cluster, ledger, lock);
}
