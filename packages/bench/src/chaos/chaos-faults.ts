import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerHandle } from '@lockkit/testkit';
import type { RedisTopologies } from '../backends/redis-topologies.js';
import type { ServerClock } from '../backends/server-clocks.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { SeededRandom } from '../support/seeded-random.js';
import type { ChaosLedger } from './chaos-ledger.js';
import type { DeclaredBounds } from './chaos-messages.js';
import type { ChaosNetwork } from './chaos-network.js';
import type { FaultKind, FaultWindow } from './fault-kinds.js';
import { injectTopologyFault, isTopologyFault } from './topology-faults.js';
import type { Worker, WorkerPool } from './worker-pool.js';

/** What a fault can reach. */
export interface FaultContext {
  readonly pool: WorkerPool;
  readonly ledger: ChaosLedger;
  readonly servers: readonly ServerHandle[];
  readonly bounds: DeclaredBounds;
  readonly random: SeededRandom;
  /** The lab's Redis Cluster and Sentinel setups (for the topology faults). */
  readonly topologies: RedisTopologies;
  /** The run's lock names. */
  readonly locks: readonly string[];
  /** Starts a replacement for a killed worker (in the background). */
  readonly replaceWorker: () => void;
  /** `--faults network`: the namespaces and relays the workers talk through. */
  readonly network?: ChaosNetwork | undefined;
  /** `--faults clock`: the clock file the backend's servers run with (or why they have none). */
  readonly serverClock?: ServerClock | undefined;
}

/** Added to the declared bounds before a lock counts as stuck (as the conformance suite does). */
export const recoverySlackMs = 1000;

/**
 * Runs `act` on a running worker the moment it enters a critical section (inside the
 * receipt of its `enter`, before the fence acknowledges it), so the fault certainly hits a
 * holder. Falls back to any running worker after 3 s without an `enter`.
 */
export async function atHolder(
  context: FaultContext,
  act: (worker: Worker, at: number) => void,
): Promise<{ worker: Worker; locks: string[] }> {
  const running = (pid: number): Worker | undefined =>
    context.pool.running().find((worker) => worker.pid === pid);
  let chosen: Worker | undefined;
  let locks: string[] = [];
  const strike = (worker: Worker, at: number): void => {
    chosen = worker;
    locks = context.ledger
      .openGrants()
      .filter((grant) => grant.pid === worker.pid)
      .map((grant) => grant.lock);
    act(worker, at);
  };
  await context.ledger.atNextEnter(
    (grant) => running(grant.pid) !== undefined,
    (grant) => strike(running(grant.pid)!, grant.acquiredAt),
    3000,
  );
  if (!chosen) strike(context.random.pick(context.pool.running()), monotonicMs());
  return { worker: chosen!, locks };
}

/** Waits (up to 3 s) until a running worker enters a critical section. */
async function awaitSomeHolder(context: FaultContext): Promise<void> {
  const running = new Set(context.pool.running().map((worker) => worker.pid));
  await context.ledger.atNextEnter(
    (grant) => running.has(grant.pid),
    () => undefined,
    3000,
  );
}

/** `count` distinct servers, chosen with the seed. */
function minority(context: FaultContext, count: number): ServerHandle[] {
  return context.random.shuffle(context.servers).slice(0, count);
}

function ports(servers: readonly ServerHandle[]): string {
  return servers.map((server) => server.port).join(', ');
}

/** Injects one fault and returns when it is over (the server is back, the worker resumed). */
export async function injectFault(kind: FaultKind, context: FaultContext): Promise<FaultWindow> {
  const { bounds } = context;
  const holderBound = bounds.abandonedReleaseMs + recoverySlackMs;
  const serverBound = Math.max(bounds.abandonedReleaseMs, bounds.lostDetectionMs) + recoverySlackMs;
  const window = (
    description: string,
    startedAt: number,
    clearedAt: number,
    pids: readonly number[] | undefined,
    recoveryBoundMs = serverBound,
  ): FaultWindow => ({ kind, description, startedAt, clearedAt, pids, recoveryBoundMs });
  const [server] = context.servers;
  if (isTopologyFault(kind)) {
    const outcome = await injectTopologyFault(kind, context);
    return window(outcome.description, outcome.startedAt, outcome.clearedAt, undefined);
  }
  if (kind !== 'kill-holder' && kind !== 'stop-holder') await awaitSomeHolder(context);
  switch (kind) {
    case 'kill-holder': {
      let killed: Promise<number> = Promise.resolve(0);
      const { worker, locks } = await atHolder(context, (victim) => {
        killed = context.pool.kill(victim);
      });
      const at = await killed;
      context.replaceWorker();
      return window(
        `SIGKILL worker ${worker.pid} holding ${locks.join(', ') || 'nothing'}`,
        at,
        at,
        [worker.pid],
        holderBound,
      );
    }
    case 'stop-holder': {
      const pauseMs = bounds.abandonedReleaseMs + 1000;
      let startedAt = 0;
      const { worker, locks } = await atHolder(context, (victim) => {
        startedAt = context.pool.pause(victim);
      });
      await sleep(pauseMs);
      const clearedAt = context.pool.resume(worker);
      return window(
        `SIGSTOP worker ${worker.pid} holding ${locks.join(', ') || 'nothing'} for ${pauseMs} ms, then SIGCONT`,
        startedAt,
        clearedAt,
        [worker.pid],
      );
    }
    case 'drop-connections': {
      const startedAt = monotonicMs();
      const closed = await Promise.all(context.servers.map((node) => node.dropClientConnections()));
      const total = closed.reduce((sum, count) => sum + count, 0);
      const what =
        server?.kind === 'etcd'
          ? 'revoked every client lease'
          : `closed every client ${server?.kind === 'zookeeper' ? 'sessions' : 'connections'}`;
      return window(`server ${what} (${total})`, startedAt, monotonicMs(), undefined);
    }
    case 'pause-server': {
      const pauseMs = bounds.lostDetectionMs + 500;
      const startedAt = monotonicMs();
      await Promise.all(context.servers.map((node) => node.pause()));
      await sleep(pauseMs);
      await Promise.all(context.servers.map((node) => node.resume()));
      return window(`SIGSTOP the server for ${pauseMs} ms`, startedAt, monotonicMs(), undefined);
    }
    case 'pause-minority': {
      const nodes = minority(context, Math.floor((context.servers.length - 1) / 2));
      const pauseMs = bounds.lostDetectionMs + 500;
      const startedAt = monotonicMs();
      await Promise.all(nodes.map((node) => node.pause()));
      await sleep(pauseMs);
      await Promise.all(nodes.map((node) => node.resume()));
      return window(
        `SIGSTOP ${nodes.length} of ${context.servers.length} nodes (ports ${ports(nodes)}) for ${pauseMs} ms`,
        startedAt,
        monotonicMs(),
        undefined,
      );
    }
    case 'restart-server': {
      const startedAt = monotonicMs();
      await Promise.all(context.servers.map((node) => node.restart()));
      return window('graceful server restart', startedAt, monotonicMs(), undefined);
    }
    case 'kill-server': {
      const startedAt = monotonicMs();
      await Promise.all(context.servers.map((node) => node.kill()));
      await Promise.all(context.servers.map((node) => node.restart()));
      return window('SIGKILL the server, then start it again', startedAt, monotonicMs(), undefined);
    }
    case 'kill-minority': {
      const nodes = minority(context, Math.floor((context.servers.length - 1) / 2));
      // Redlock's delayed restart: stay down longer than a lease, come back empty.
      const downMs = bounds.abandonedReleaseMs + 500;
      const startedAt = monotonicMs();
      await Promise.all(nodes.map((node) => node.kill()));
      await sleep(downMs);
      await Promise.all(nodes.map((node) => node.restart()));
      return window(
        `SIGKILL ${nodes.length} of ${context.servers.length} nodes (ports ${ports(nodes)}), restart them empty ${downMs} ms later`,
        startedAt,
        monotonicMs(),
        undefined,
      );
    }
    default:
      // The `--faults network` and `--faults clock` kinds: chaos-network-faults.ts, chaos-clock-faults.ts.
      throw new Error(`${kind} is injected by injectNetworkFault or injectClockFault`);
  }
}
