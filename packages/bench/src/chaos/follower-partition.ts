import { setTimeout as sleep } from 'node:timers/promises';
import type { ZooKeeperMember } from '@lockkit/testkit';
import { monotonicMs } from '../support/monotonic-clock.js';
import { atHolder, type FaultContext } from './chaos-faults.js';
import type { ChaosNetwork } from './chaos-network.js';
import type { FaultWindow } from './fault-kinds.js';

/** How long a healed follower may take to serve again before the run goes on regardless. */
const rejoinLimitMs = 30_000;

function isMember(server: unknown): server is ZooKeeperMember {
  return typeof server === 'object' && server !== null && 'partition' in server;
}

/**
 * `partition-follower` (ZooKeeper ensemble, `--faults network`): the moment a worker enters a
 * critical section, the member its session goes through (found by the relay its namespace is
 * connected to) is cut off from the other members and every client (its veth link down) — if
 * that member leads, the follower with the most clients instead. Lasts `lastsMs`, then heals
 * and waits until the member follows again. Hits the workers connected through it.
 */
export async function injectFollowerPartition(
  context: FaultContext,
  network: ChaosNetwork,
  lastsMs: number,
  recoveryBoundMs: number,
): Promise<FaultWindow> {
  const members = context.servers.filter(isMember);
  if (members.length < 3) throw new Error('partition-follower needs the ZooKeeper ensemble');
  const modes = await Promise.all(members.map((member) => member.mode()));
  const clientsOf = (index: number): string[] => network.relays[index]?.clientAddresses() ?? [];
  let cut: { index: number; pids: number[]; viaHolder: boolean } | undefined;
  let applied: Promise<void> = Promise.resolve();
  let startedAt = 0;
  const { worker, locks } = await atHolder(context, (victim) => {
    const address = network.addressOf(victim.namespace ?? '');
    const through = members.findIndex((_, index) => clientsOf(index).includes(address));
    const followers = members
      .map((_, index) => index)
      .filter((index) => modes[index] === 'follower')
      .sort((a, b) => clientsOf(b).length - clientsOf(a).length);
    const viaHolder = through >= 0 && modes[through] === 'follower';
    const index = viaHolder ? through : followers[0];
    if (index === undefined) return;
    const addresses = new Set(clientsOf(index));
    const pids = context.pool
      .running()
      .filter((each) => addresses.has(network.addressOf(each.namespace ?? '')))
      .map((each) => each.pid);
    cut = { index, pids, viaHolder };
    applied = members[index]!.partition();
    startedAt = monotonicMs();
  });
  if (cut === undefined) throw new Error(`no ZooKeeper member follows (${modes.join(', ')})`);
  const member = members[cut.index]!;
  await applied;
  await sleep(lastsMs);
  const clearedAt = monotonicMs();
  await member.heal();
  const rejoinBy = monotonicMs() + rejoinLimitMs;
  let rejoined = false;
  while (!rejoined && monotonicMs() < rejoinBy) {
    rejoined = (await member.mode()) === 'follower';
    if (!rejoined) await sleep(100);
  }
  const rejoinMs = Math.round(monotonicMs() - clearedAt);
  const whose = cut.viaHolder
    ? `the follower worker ${worker.pid}'s session is on`
    : `a follower (worker ${worker.pid}'s session is on the leader)`;
  return {
    kind: 'partition-follower',
    description: `cut off ${whose} (${member.host}, ${cut.pids.length} worker(s) connected; ${locks.join(', ') || 'nothing'} held) for ${lastsMs} ms, then heal (${rejoined ? `following again ${rejoinMs} ms later` : `not following ${rejoinMs} ms later`})`,
    startedAt,
    clearedAt,
    pids: cut.pids,
    recoveryBoundMs,
  };
}
