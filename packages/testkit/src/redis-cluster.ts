import { pollUntil, redisCommand, redisInfo, stopAllServers } from './redis-admin.js';
import { sendRedisCommands } from './redis-protocol.js';
import { startRedisServers } from './redis-server.js';
import type { ServerHandle } from './server-handle.js';
import type { ServerStartOptions } from './start-options.js';

/** Options for {@link startRedisCluster}. */
export interface RedisClusterOptions extends Pick<ServerStartOptions, 'startTimeoutMs'> {
  /** Primaries (each owns an equal share of the 16384 slots). @defaultValue 3 */
  readonly primaries?: number;
  /** `cluster-node-timeout`: how long a silent primary takes to be failed over. @defaultValue 1000 */
  readonly nodeTimeoutMs?: number;
}

/**
 * A throwaway Redis Cluster: `primaries` primaries, one replica each, on loopback. Every node
 * is a {@link ServerHandle} with its own fault hooks; the topology hooks below follow
 * promotions (which node is a primary changes with a failover).
 */
export interface RedisCluster extends AsyncDisposable {
  /** Every node, primaries first as started (roles change after a failover). */
  readonly nodes: readonly ServerHandle[];
  /** `127.0.0.1:PORT` of every node. */
  readonly seeds: readonly string[];
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,…` (every node as a seed). */
  readonly url: string;
  /** The node that serves `key`'s slot now (asks a live node). */
  primaryOf(key: string): Promise<ServerHandle>;
  /** The replica of `primary`. */
  replicaOf(primary: ServerHandle): Promise<ServerHandle>;
  /**
   * `CLUSTER FAILOVER` on the replica of `primary` (a coordinated switch: the replica catches
   * up first); resolves with the promoted node once every live node agrees.
   */
  failover(primary: ServerHandle): Promise<ServerHandle>;
  /** SIGKILLs `primary`; resolves with its replica once the cluster promoted it and is `ok`. */
  killPrimary(primary: ServerHandle): Promise<ServerHandle>;
  /**
   * Moves `key`'s slot to another primary as `redis-cli --cluster reshard` does, while clients
   * keep working: `SETSLOT IMPORTING` on the target, `MIGRATING` on the source, `MIGRATE` of
   * its keys in batches, then `SETSLOT NODE` on every primary (target and source first).
   */
  moveSlotOf(key: string): Promise<SlotMove>;
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/** What {@link RedisCluster.moveSlotOf} did. */
export interface SlotMove {
  readonly slot: number;
  readonly from: ServerHandle;
  readonly to: ServerHandle;
  /** Keys migrated. */
  readonly keys: number;
}

const slotCount = 16_384;

interface NodeLine {
  readonly id: string;
  readonly port: number;
  readonly flags: readonly string[];
  readonly primaryId: string;
  readonly slots: readonly string[];
}

async function clusterNodes(server: ServerHandle): Promise<NodeLine[]> {
  const text = String(await redisCommand(server, 'CLUSTER', 'NODES'));
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id = '', address = '', flags = '', primaryId = '', ...rest] = line.trim().split(' ');
      const port = Number(/:(\d+)@/.exec(address)?.[1]);
      return { id, port, flags: flags.split(','), primaryId, slots: rest.slice(4) };
    });
}

/** Whether a `CLUSTER NODES` line's slot ranges include `slot`. */
function serves(line: NodeLine, slot: number): boolean {
  return line.slots.some((range) => {
    const [from = '', to = from] = range.split('-');
    return slot >= Number(from) && slot <= Number(to);
  });
}

/** The nodes that answer PING now (a killed or paused node does not). */
async function live(nodes: readonly ServerHandle[]): Promise<ServerHandle[]> {
  const answers = await Promise.all(
    nodes.map((node) =>
      sendRedisCommands(node.host, node.port, [['PING']], 500).then(
        ([reply]) => reply === 'PONG',
        () => false,
      ),
    ),
  );
  return nodes.filter((_, index) => answers[index]);
}

/**
 * Starts a Redis Cluster from the `redis-server` binary: `primaries` nodes with the slots split
 * evenly (CLUSTER ADDSLOTSRANGE), `primaries` replicas (CLUSTER REPLICATE), all MEETing the
 * first node; resolves once every node says `cluster_state:ok` and every replica's link is up.
 * Never taken from the environment: the topology hooks need controllable servers.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const primaries = options.primaries ?? 3;
  if (!Number.isInteger(primaries) || primaries < 1) {
    throw new RangeError(
      `startRedisCluster: primaries must be a positive integer, got ${primaries}`,
    );
  }
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const nodes = await startRedisServers(2 * primaries, {
    useEnvironment: false,
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
    extraArguments: [
      ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
      ...['--cluster-node-timeout', String(nodeTimeoutMs)],
      ...['--cluster-replica-validity-factor', '0'],
      ...['--appendonly', 'no'],
    ],
  });
  try {
    await formCluster(nodes, primaries);
  } catch (error) {
    await stopAllServers(nodes);
    throw error;
  }
  return handleOf(nodes, nodeTimeoutMs);
}

async function formCluster(nodes: readonly ServerHandle[], primaries: number): Promise<void> {
  const share = Math.ceil(slotCount / primaries);
  await Promise.all(
    nodes.slice(0, primaries).map((node, index) => {
      const from = index * share;
      const to = Math.min(slotCount, from + share) - 1;
      return redisCommand(node, 'CLUSTER', 'ADDSLOTSRANGE', String(from), String(to));
    }),
  );
  const first = nodes[0] as ServerHandle;
  for (const node of nodes.slice(1)) {
    await redisCommand(first, 'CLUSTER', 'MEET', node.host, String(node.port));
  }
  const ids = await Promise.all(
    nodes.map(async (node) => String(await redisCommand(node, 'CLUSTER', 'MYID'))),
  );
  // A replica can follow a primary only once it knows it (gossip spreads the MEETs).
  await pollUntil(
    async () => {
      const views = await Promise.all(nodes.map(clusterNodes));
      return views.every((view) => view.length === nodes.length) ? true : undefined;
    },
    20_000,
    'every cluster node knowing every other',
  );
  await Promise.all(
    nodes
      .slice(primaries)
      .map((replica, index) => redisCommand(replica, 'CLUSTER', 'REPLICATE', ids[index] as string)),
  );
  await waitUntilSettled(nodes, 20_000);
}

/** Every live node says `cluster_state:ok` and every live replica's link to its primary is up. */
async function waitUntilSettled(nodes: readonly ServerHandle[], timeoutMs: number): Promise<void> {
  await pollUntil(
    async () => {
      for (const node of await live(nodes)) {
        const state = String(await redisCommand(node, 'CLUSTER', 'INFO'));
        if (!state.includes('cluster_state:ok')) return undefined;
        const replication = await redisInfo(node, 'replication');
        if (replication.get('role') === 'slave' && replication.get('master_link_status') !== 'up') {
          return undefined;
        }
      }
      return true;
    },
    timeoutMs,
    'the Redis Cluster settling (state ok, replica links up)',
  );
}

function handleOf(nodes: readonly ServerHandle[], nodeTimeoutMs: number): RedisCluster {
  const seeds = nodes.map((node) => `${node.host}:${node.port}`);
  const byPort = (port: number): ServerHandle => {
    const node = nodes.find((candidate) => candidate.port === port);
    if (node === undefined) throw new Error(`no cluster node on port ${port}`);
    return node;
  };
  const view = async (): Promise<NodeLine[]> =>
    clusterNodes((await live(nodes))[0] as ServerHandle);
  // A new replica is known by its primary one gossip round after the switch: ask until it is.
  const replicaOf = (primary: ServerHandle): Promise<ServerHandle> =>
    pollUntil(
      async () => {
        const lines = await clusterNodes(primary);
        const me = lines.find((line) => line.flags.includes('myself'));
        const replica = lines.find(
          (line) => line.primaryId === me?.id && !line.flags.includes('fail'),
        );
        return replica === undefined ? undefined : byPort(replica.port);
      },
      10_000,
      `a replica of the node on port ${primary.port}`,
    );
  const waitForPrimary = async (node: ServerHandle, timeoutMs: number): Promise<ServerHandle> => {
    await pollUntil(
      async () => {
        const lines = await Promise.all((await live(nodes)).map(clusterNodes));
        const agreed = lines.every((view) =>
          view.some((line) => line.port === node.port && line.flags.includes('master')),
        );
        return agreed ? true : undefined;
      },
      timeoutMs,
      `the node on port ${node.port} being promoted`,
    );
    await waitUntilSettled(nodes, timeoutMs);
    return node;
  };
  const primaryOf = async (key: string): Promise<ServerHandle> => {
    const probe = (await live(nodes))[0] as ServerHandle;
    const slot = Number(await redisCommand(probe, 'CLUSTER', 'KEYSLOT', key));
    const owner = (await view()).find(
      (line) => line.flags.includes('master') && !line.flags.includes('fail') && serves(line, slot),
    );
    if (owner === undefined) throw new Error(`no live primary serves slot ${slot}`);
    return byPort(owner.port);
  };
  const stop = (): Promise<void> => stopAllServers(nodes);
  return {
    nodes,
    seeds,
    url: `redis+cluster://${seeds.join(',')}`,
    primaryOf,
    replicaOf,
    async failover(primary) {
      const replica = await replicaOf(primary);
      await redisCommand(replica, 'CLUSTER', 'FAILOVER');
      return waitForPrimary(replica, 20_000);
    },
    async killPrimary(primary) {
      const replica = await replicaOf(primary);
      await primary.kill();
      return waitForPrimary(replica, 20 * nodeTimeoutMs + 10_000);
    },
    async moveSlotOf(key) {
      const lines = await view();
      const from = await primaryOf(key);
      const masters = lines.filter(
        (line) => line.flags.includes('master') && !line.flags.includes('fail'),
      );
      const source = masters.find((line) => line.port === from.port);
      const target = masters.find((line) => line.port !== from.port);
      if (source === undefined || target === undefined) throw new Error('no primary to move to');
      const to = byPort(target.port);
      const slot = String(await redisCommand(from, 'CLUSTER', 'KEYSLOT', key));
      await redisCommand(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
      await redisCommand(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
      let keys = 0;
      for (;;) {
        const batch = await redisCommand(from, 'CLUSTER', 'GETKEYSINSLOT', slot, '100');
        if (!Array.isArray(batch) || batch.length === 0) break;
        const names = batch.map(String);
        await redisCommand(
          from,
          'MIGRATE',
          to.host,
          String(to.port),
          '',
          '0',
          '5000',
          'REPLACE',
          'KEYS',
          ...names,
        );
        keys += names.length;
      }
      const others = masters.filter((line) => line !== source && line !== target);
      for (const line of [target, source, ...others]) {
        await redisCommand(byPort(line.port), 'CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      }
      // Done once every node (replicas learn by gossip) names the new owner: any map refresh does.
      await pollUntil(
        async () => {
          const views = await Promise.all((await live(nodes)).map(clusterNodes));
          const owns = (line: NodeLine) => line.port === target.port && serves(line, Number(slot));
          return views.every((lines) => lines.some(owns)) ? true : undefined;
        },
        10_000,
        `every cluster node knowing that slot ${slot} moved`,
      );
      return { slot: Number(slot), from, to, keys };
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
