import { setTimeout as sleep } from 'node:timers/promises';
import { redisLockKeys } from '@lockkit/redis';
import type { RedisCluster, ServerHandle } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { ChaosLedger } from './chaos-ledger.js';
import { awaitLinkedReplica, type TopologyFaultOutcome } from './topology-support.js';

/** One command on one node, on a connection of its own. */
async function call(node: ServerHandle, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis(node.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(String(args[0]), ...args.slice(1).map(String));
  } finally {
    client.disconnect();
  }
}

/** Polls `check` every 50 ms until it is true (≤ `timeoutMs`). */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = monotonicMs() + timeoutMs;
  while (monotonicMs() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${what} within ${timeoutMs} ms`);
}

/** The keys of a chaos mutex (default namespace): all in one slot, by their hash tag. */
const lockKey = (lock: string): string => redisLockKeys('', 'mutex', lock).lock;

/**
 * Moves the slot of `lock`'s keys to another primary while grants run (the test kit's
 * `moveSlotOf`: SETSLOT IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE). Clients follow ASK and
 * TRYAGAIN during the move and MOVED after it.
 */
export async function reshardLockSlot(
  cluster: RedisCluster,
  lock: string,
): Promise<TopologyFaultOutcome> {
  const startedAt = monotonicMs();
  const move = await cluster.moveSlotOf(lockKey(lock));
  await until(
    async () => (await cluster.primaryOf(lockKey(lock))).port === move.to.port,
    10_000,
    `slot ${move.slot} not owned by ${move.to.port}`,
  );
  const clearedAt = monotonicMs();
  return {
    description: `slot ${move.slot} of ${lock} moved ${move.from.port} → ${move.to.port} (${move.keys} key(s) migrated) in ${Math.round(clearedAt - startedAt)} ms`,
    startedAt,
    clearedAt,
  };
}

/**
 * The hazard without acknowledgement, made certain: the replica of `lock`'s primary stops
 * replicating (a wrong `masterauth`, its link dropped: every re-sync fails), the primary
 * grants (unconfirmed), is SIGKILLed at the next grant of `lock`, and the lagging replica takes
 * over with `CLUSTER FAILOVER TAKEOVER`. Then the killed node restarts and rejoins as a
 * replica. With `minReplicas` 1 no grant is confirmed while the link is down, so none is lost.
 */
export async function laggingTakeover(
  cluster: RedisCluster,
  ledger: ChaosLedger,
  lock: string,
): Promise<TopologyFaultOutcome> {
  const primary = await cluster.primaryOf(lockKey(lock));
  const replica = await cluster.replicaOf(primary);
  const startedAt = monotonicMs();
  await call(replica, 'CONFIG', 'SET', 'masterauth', 'wrong');
  await call(primary, 'CLIENT', 'KILL', 'TYPE', 'replica');
  await until(
    async () => String(await call(primary, 'INFO', 'replication')).includes('connected_slaves:0'),
    5000,
    `the replica ${replica.port} did not drop its link`,
  );
  let killing: Promise<void> | undefined;
  const strike = (): void => {
    killing = primary.kill();
  };
  await ledger.atNextEnter((grant) => grant.lock === lock, strike, 3000);
  if (!killing) strike();
  await killing;
  const killedAt = monotonicMs();
  await call(replica, 'CONFIG', 'SET', 'masterauth', '');
  await call(replica, 'CLUSTER', 'FAILOVER', 'TAKEOVER');
  await until(
    async () => (await cluster.primaryOf(lockKey(lock))).port === replica.port,
    20_000,
    `the replica ${replica.port} did not take over`,
  );
  const promotedAt = monotonicMs();
  await primary.restart();
  await awaitLinkedReplica(primary);
  const clearedAt = monotonicMs();
  return {
    description: `replication ${primary.port} → ${replica.port} cut; SIGKILL primary ${primary.port} at a grant of ${lock} ${Math.round(killedAt - startedAt)} ms later; CLUSTER FAILOVER TAKEOVER on ${replica.port} (${Math.round(promotedAt - killedAt)} ms); the old primary rejoined as its replica ${Math.round(clearedAt - promotedAt)} ms later`,
    startedAt,
    clearedAt,
  };
}
