import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseTopologyUrl, type Topology } from './topology-url.js';

/** An ioredis client: a standalone `Redis` (also one that finds its primary through Sentinel) or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/** ioredis 6 types its options constructor per reply mapping; both majors accept this. */
type OptionsConstructor = new (options: RedisOptions) => Redis;

/**
 * Options lockkit forces on clients it creates: nothing is ever queued or replayed by ioredis,
 * and nothing reconnects in the background — a command connects when it needs the connection
 * (through the Sentinels again, when they are used), so an idle provider holds no timer and
 * each attempt during an outage fails at once.
 */
const ownedClientOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
  sentinelRetryStrategy: () => null,
} satisfies RedisOptions;

/**
 * Creates the client of a node spec the provider owns: a `redis://` URL or ioredis options
 * (one node, or a primary found through `sentinels`), or a `redis+cluster://` /
 * `redis+sentinel://` URL (see topology-url.ts; validated before, at construction).
 */
export function createOwnedClient(spec: string | RedisOptions, where: string): RedisClient {
  if (typeof spec !== 'string') {
    return new (Redis as OptionsConstructor)({ ...spec, ...ownedClientOptions });
  }
  if (!/^redis\+/i.test(spec)) return new Redis(spec, ownedClientOptions);
  return topologyClient(parseTopologyUrl(spec, where));
}

function topologyClient(topology: Topology): RedisClient {
  const credentials = {
    ...(topology.username !== undefined && { username: topology.username }),
    ...(topology.password !== undefined && { password: topology.password }),
  };
  if (topology.kind === 'sentinel') {
    return new (Redis as OptionsConstructor)({
      sentinels: topology.sentinels.map(({ host, port }) => ({ host, port })),
      name: topology.masterName,
      db: topology.db,
      ...credentials,
      ...(topology.sentinelUsername !== undefined && {
        sentinelUsername: topology.sentinelUsername,
      }),
      ...(topology.sentinelPassword !== undefined && {
        sentinelPassword: topology.sentinelPassword,
      }),
      ...ownedClientOptions,
    });
  }
  // The Cluster client keeps its own node connections (it reconnects them as slots move);
  // ours are the deadlines: nothing waits in its offline queue, and it does not retry a
  // cluster it cannot reach at all.
  return new Cluster(
    topology.seeds.map(({ host, port }) => ({ host, port })),
    {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: () => null,
      redisOptions: credentials,
    },
  );
}

/** An ioredis `Cluster` (also from another copy of ioredis). */
export function isCluster(client: RedisClient): boolean {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/**
 * How errors name a client: host:port or socket of a standalone client, the master name and
 * Sentinels of one that uses Sentinel, the startup nodes of a Cluster.
 */
export function addressOf(client: RedisClient): string {
  const named = (nodes: readonly unknown[]): string =>
    nodes
      .map((node) =>
        typeof node === 'object' && node !== null
          ? `${(node as { host?: string }).host ?? 'localhost'}:${(node as { port?: number }).port ?? 6379}`
          : String(node),
      )
      .join(', ');
  if (isCluster(client)) {
    return `cluster ${named((client as { startupNodes?: readonly unknown[] }).startupNodes ?? [])}`;
  }
  const { path, host, port, sentinels, name } = client.options as {
    path?: string;
    host?: string;
    port?: number;
    sentinels?: readonly unknown[];
    name?: string;
  };
  if (sentinels && sentinels.length > 0)
    return `master "${name}" via sentinels ${named(sentinels)}`;
  return path ? path : `${host ?? 'localhost'}:${port ?? 6379}`;
}
