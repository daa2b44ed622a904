import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable } from './executables.js';
import { pollUntil, redisCommand, redisInfo, stopAllServers } from './redis-admin.js';
import { redisOperations, startRedisServers } from './redis-server.js';
import type { ServerHandle } from './server-handle.js';
import {
  defaultStartTimeoutMs,
  startControllableServer,
  withTemporaryDirectory,
} from './server-launcher.js';
import { startAll } from './start-all.js';
import type { ServerStartOptions } from './start-options.js';

/** Options for {@link startRedisSentinel}. */
export interface RedisSentinelOptions extends Pick<ServerStartOptions, 'startTimeoutMs'> {
  /** Replicas of the primary. @defaultValue 2 */
  readonly replicas?: number;
  /** Sentinels (the failover quorum is a majority of them). @defaultValue 3 */
  readonly sentinels?: number;
  /** The monitored master's name. @defaultValue 'lockkit' */
  readonly masterName?: string;
  /** `down-after-milliseconds`: how long a silent primary takes to be failed over. @defaultValue 1000 */
  readonly downAfterMs?: number;
}

/** A primary with replicas, monitored by Sentinels; every process is a controllable handle. */
export interface RedisSentinelSetup extends AsyncDisposable {
  readonly masterName: string;
  /** The data nodes: the first-started primary, then its replicas (roles change on failover). */
  readonly servers: readonly ServerHandle[];
  readonly sentinels: readonly ServerHandle[];
  /** `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,…/<masterName>` */
  readonly url: string;
  /** The primary the Sentinels name now. */
  primary(): Promise<ServerHandle>;
  /**
   * `SENTINEL FAILOVER`: a replica is promoted without agreement from the others (the old
   * primary is turned into a replica); resolves with the new primary once it reports
   * `role:master` and the Sentinels name it.
   */
  failover(): Promise<ServerHandle>;
  /** SIGKILLs the primary; resolves with the replica the Sentinels promoted. */
  killPrimary(): Promise<ServerHandle>;
  /** Stops the Sentinels, then the data nodes, and removes their directories. */
  stop(): Promise<void>;
}

async function startSentinelProcess(
  primary: ServerHandle,
  masterName: string,
  quorum: number,
  downAfterMs: number,
  options: RedisSentinelOptions,
): Promise<ServerHandle> {
  const executable = findExecutable(['redis-server'], 'redis-server');
  return withTemporaryDirectory('redis-sentinel', (directory) => {
    const configPath = join(directory, 'sentinel.conf');
    const logPath = join(directory, 'sentinel.log');
    return startControllableServer({
      operations: redisOperations,
      host: '127.0.0.1',
      temporaryDirectory: directory,
      dataDirectory: directory,
      logPath,
      startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
      url: (port) => `redis://127.0.0.1:${port}`,
      async launchSpec(port) {
        // Sentinel rewrites its configuration as it learns: write it once, keep it on restart.
        if (!existsSync(configPath)) {
          const lines = [
            `port ${port}`,
            'bind 127.0.0.1',
            'protected-mode no',
            `dir ${directory}`,
            `sentinel monitor ${masterName} ${primary.host} ${primary.port} ${quorum}`,
            `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
            `sentinel failover-timeout ${masterName} ${Math.max(3000, 3 * downAfterMs)}`,
            `sentinel parallel-syncs ${masterName} 2`,
          ];
          await writeFile(configPath, `${lines.join('\n')}\n`);
        }
        return {
          command: executable,
          args: [configPath, '--sentinel', '--daemonize', 'no', '--logfile', ''],
          logPath,
          cwd: directory,
          temporaryDirectory: directory,
        };
      },
    });
  });
}

/**
 * Starts a primary, `replicas` replicas (`--replicaof`) and `sentinels` Sentinels
 * (`redis-server --sentinel`) on free loopback ports, each in its own temporary directory;
 * resolves once every replica's link is up and every Sentinel knows all replicas and all other
 * Sentinels (so a failover can be agreed). Never taken from the environment.
 */
export async function startRedisSentinel(
  options: RedisSentinelOptions = {},
): Promise<RedisSentinelSetup> {
  const replicaCount = options.replicas ?? 2;
  const sentinelCount = options.sentinels ?? 3;
  const masterName = options.masterName ?? 'lockkit';
  const downAfterMs = options.downAfterMs ?? 1000;
  if (!Number.isInteger(replicaCount) || replicaCount < 1) {
    throw new RangeError(
      `startRedisSentinel: replicas must be a positive integer, got ${replicaCount}`,
    );
  }
  if (!Number.isInteger(sentinelCount) || sentinelCount < 1) {
    throw new RangeError(
      `startRedisSentinel: sentinels must be a positive integer, got ${sentinelCount}`,
    );
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(masterName)) {
    throw new RangeError(
      `startRedisSentinel: masterName must be [A-Za-z0-9_.-]+, got "${masterName}"`,
    );
  }
  const timing =
    options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs };
  const [primary] = await startRedisServers(1, { useEnvironment: false, ...timing });
  const started: ServerHandle[] = [primary as ServerHandle];
  try {
    const replicaOf = ['--replicaof', primary!.host, String(primary!.port)];
    started.push(
      ...(await startRedisServers(replicaCount, {
        useEnvironment: false,
        ...timing,
        extraArguments: replicaOf,
      })),
    );
    const quorum = Math.floor(sentinelCount / 2) + 1;
    const sentinels = await startAll(
      Array.from(
        { length: sentinelCount },
        () => () => startSentinelProcess(primary!, masterName, quorum, downAfterMs, options),
      ),
    );
    started.unshift(...sentinels);
    const servers = started.slice(sentinelCount);
    await pollUntil(
      async () => {
        for (const replica of servers.slice(1)) {
          const replication = await redisInfo(replica, 'replication');
          if (replication.get('master_link_status') !== 'up') return undefined;
        }
        for (const sentinel of sentinels) {
          const known = await redisCommand(sentinel, 'SENTINEL', 'REPLICAS', masterName);
          const peers = await redisCommand(sentinel, 'SENTINEL', 'SENTINELS', masterName);
          if (!Array.isArray(known) || known.length < replicaCount) return undefined;
          if (!Array.isArray(peers) || peers.length < sentinelCount - 1) return undefined;
        }
        return true;
      },
      30_000,
      'the Sentinels discovering every replica and each other',
    );
    return handleOf(masterName, servers, sentinels, downAfterMs);
  } catch (error) {
    await stopAllServers(started);
    throw error;
  }
}

function handleOf(
  masterName: string,
  servers: readonly ServerHandle[],
  sentinels: readonly ServerHandle[],
  downAfterMs: number,
): RedisSentinelSetup {
  /** The address a Sentinel that answers gives for the master, as a handle. */
  const named = async (): Promise<ServerHandle> => {
    let lastError: unknown;
    for (const sentinel of sentinels) {
      try {
        const reply = await redisCommand(
          sentinel,
          'SENTINEL',
          'GET-MASTER-ADDR-BY-NAME',
          masterName,
        );
        const port = Number(Array.isArray(reply) ? reply[1] : Number.NaN);
        const server = servers.find((candidate) => candidate.port === port);
        if (server) return server;
      } catch (error) {
        lastError = error;
      }
    }
    throw new Error('no Sentinel named a known primary', { cause: lastError });
  };
  /** Waits until every live Sentinel names a node other than `old` that says it is a master. */
  const promotedFrom = (old: ServerHandle, timeoutMs: number): Promise<ServerHandle> =>
    pollUntil(
      async () => {
        const ports = new Set<number>();
        for (const sentinel of sentinels) {
          const reply = await redisCommand(
            sentinel,
            'SENTINEL',
            'GET-MASTER-ADDR-BY-NAME',
            masterName,
          );
          ports.add(Number(Array.isArray(reply) ? reply[1] : Number.NaN));
        }
        const [port] = [...ports];
        if (ports.size !== 1 || port === old.port) return undefined;
        const server = servers.find((candidate) => candidate.port === port);
        if (server === undefined) return undefined;
        const replication = await redisInfo(server, 'replication');
        return replication.get('role') === 'master' ? server : undefined;
      },
      timeoutMs,
      `a failover away from the primary on port ${old.port}`,
    );
  const stop = async (): Promise<void> => {
    await stopAllServers(sentinels);
    await stopAllServers(servers);
  };
  return {
    masterName,
    servers,
    sentinels,
    url: `redis+sentinel://${sentinels.map((sentinel) => `${sentinel.host}:${sentinel.port}`).join(',')}/${masterName}`,
    primary: named,
    async failover() {
      const old = await named();
      await redisCommand(sentinels[0] as ServerHandle, 'SENTINEL', 'FAILOVER', masterName);
      return promotedFrom(old, 30_000);
    },
    async killPrimary() {
      const old = await named();
      await old.kill();
      return promotedFrom(old, 20 * downAfterMs + 20_000);
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
