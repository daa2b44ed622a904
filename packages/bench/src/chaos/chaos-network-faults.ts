import { setTimeout as sleep } from 'node:timers/promises';
import type { BackendId } from '../backends/backend-ids.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { SeededRandom } from '../support/seeded-random.js';
import { atHolder, type FaultContext, recoverySlackMs } from './chaos-faults.js';
import type { FaultKind, FaultWindow } from './fault-kinds.js';
import { injectFollowerPartition } from './follower-partition.js';

/** The faults that need `--faults network` (a {@link ChaosNetwork} in the context). */
export type NetworkFaultKind = Extract<
  FaultKind,
  | 'partition-holder'
  | 'partition-minority'
  | 'partition-majority'
  | 'partition-follower'
  | 'lossy-holder'
  | 'delay-server'
>;

export const networkFaultKinds: readonly NetworkFaultKind[] = [
  'partition-holder',
  'partition-minority',
  'partition-majority',
  'partition-follower',
  'lossy-holder',
  'delay-server',
];

export function isNetworkFault(kind: FaultKind): kind is NetworkFaultKind {
  return (networkFaultKinds as readonly string[]).includes(kind);
}

/** Share of packets `lossy-holder` drops, in each direction. */
export const lossPercent = 30;

/**
 * Injects one network fault and returns when it is healed. The holder faults pick a worker the
 * moment it enters a critical section and cut its namespace off from all servers
 * (`partition-holder`), from the Redlock minority (2 of 5) or majority (3 of 5), or drop
 * {@link lossPercent} % of its packets; `delay-server` has the relays hold every chunk.
 * Each lasts past the backend's declared bounds, so the cut-off holder's lease can expire.
 */
export async function injectNetworkFault(
  kind: NetworkFaultKind,
  context: FaultContext,
): Promise<FaultWindow> {
  const { bounds, network } = context;
  if (!network) throw new Error(`${kind} needs the network of \`pnpm chaos --faults network\``);
  const lastsMs = Math.max(bounds.abandonedReleaseMs, bounds.lostDetectionMs) + 1000;
  const recoveryBoundMs = lastsMs + recoverySlackMs;
  if (kind === 'partition-follower') {
    return injectFollowerPartition(context, network, lastsMs, recoveryBoundMs);
  }
  if (kind === 'delay-server') {
    // A quarter of the lost-detection bound each way: slow, yet within what a holder can take.
    const delayMs = Math.max(20, Math.round(bounds.lostDetectionMs / 8));
    const startedAt = monotonicMs();
    for (const relay of network.relays) relay.setDelay(delayMs);
    await sleep(lastsMs);
    const clearedAt = monotonicMs();
    for (const relay of network.relays) relay.setDelay(0);
    return {
      kind,
      description: `every server link delays each chunk ${delayMs} ms each way for ${lastsMs} ms`,
      startedAt,
      clearedAt,
      pids: undefined,
      recoveryBoundMs,
    };
  }
  const count = { 'partition-minority': 2, 'partition-majority': 3 } as Partial<
    Record<NetworkFaultKind, number>
  >;
  const relays =
    count[kind] === undefined
      ? network.relays
      : context.random.shuffle(network.relays).slice(0, count[kind]);
  let applied: Promise<void> = Promise.resolve();
  let startedAt = 0;
  const { worker, locks } = await atHolder(context, (victim) => {
    const namespace = victim.namespace ?? '';
    const firewall = network.firewallOf(namespace);
    if (kind === 'lossy-holder') {
      applied = firewall.lose(lossPercent);
    } else {
      // The relays stop at once (nft takes a process start, longer than a critical section);
      // then the packets are dropped for real.
      for (const relay of relays) relay.hold(network.addressOf(namespace));
      applied = firewall.isolate(
        network.host,
        relays.map((relay) => relay.port),
      );
    }
    startedAt = monotonicMs();
  });
  await applied;
  await sleep(lastsMs);
  const clearedAt = monotonicMs();
  await network.firewallOf(worker.namespace ?? '').clear();
  for (const relay of relays) relay.release(network.addressOf(worker.namespace ?? ''));
  const what =
    kind === 'lossy-holder'
      ? `drop ${lossPercent} % of the packets of worker ${worker.pid}`
      : `cut worker ${worker.pid} off from ${relays.length} of ${network.relays.length} server(s)`;
  return {
    kind,
    description: `${what} (holding ${locks.join(', ') || 'nothing'}) for ${lastsMs} ms, then heal`,
    startedAt,
    clearedAt,
    pids: [worker.pid],
    recoveryBoundMs,
  };
}

/**
 * `--faults network`: the faults per backend (Redlock gets the minority/majority cuts; a
 * ZooKeeper ensemble, `ensemble`, a follower cut off).
 */
export function networkFaultPlan(
  backend: BackendId,
  quick: boolean,
  cycles: number,
  random: SeededRandom,
  ensemble = false,
): FaultKind[] {
  if (backend === 'file') return [];
  const all: FaultKind[] =
    backend === 'redlock'
      ? ['partition-minority', 'partition-majority', 'lossy-holder', 'delay-server']
      : ['partition-holder', 'lossy-holder', 'delay-server'];
  if (backend === 'zookeeper' && ensemble) all.push('partition-follower');
  if (quick) return all;
  return Array.from({ length: cycles }, () => random.shuffle(all)).flat();
}
