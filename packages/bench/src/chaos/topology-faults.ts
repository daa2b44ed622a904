import { setTimeout as sleep } from 'node:timers/promises';
import { redisLockKeys } from '@lockkit/redis';
import type { ServerHandle } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import type { RedisTopologies } from '../backends/redis-topologies.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { ChaosLedger } from './chaos-ledger.js';

/** A Redis Cluster or Sentinel fault: what was done, and when it started and was over. */
export interface TopologyFaultOutcome {
  readonly description: string;
  readonly startedAt: number;
  readonly clearedAt: number;
}

/** Resolves once `node` reports itself a replica with its link to the primary up (≤ 30 s). */
async function awaitLinkedReplica(node: ServerHandle): Promise<void> {
  const client = new Redis(node.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const deadline = monotonicMs() + 30_000;
  try {
    await client.connect();
    while (monotonicMs() < deadline) {
      const info = await client.info('replication');
      if (/role:slave/.test(info) && /master_link_status:up/.test(info)) return;
      await sleep(50);
    }
    throw new Error(`node on port ${node.port} did not rejoin as a replica within 30 s`);
  } finally {
    client.disconnect();
  }
}

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
  // Over once the shard has a replica again: with minReplicas 1 no grant can be acknowledged
  // before (the promoted node has no replica of its own until the killed one rejoins).
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
  const clearedAt = monotonicMs();
  if (topologies.sentinel) await awaitLinkedReplica(primary);
  const how = topologies.cluster ? 'CLUSTER FAILOVER' : 'SENTINEL FAILOVER';
  return {
    description: `${how}: ${primary.port} → ${promoted.port} in ${Math.round(clearedAt - startedAt)} ms`,
    startedAt,
    clearedAt,
  };
}
