import { join } from 'node:path';
import { environmentVariables, serversFromEnvironment } from './environment-overrides.js';
import { findExecutable } from './executables.js';
import { ExternalServer } from './external-server.js';
import { RedisReplyError, sendRedisCommands } from './redis-protocol.js';
import type { ServerHandle } from './server-handle.js';
import {
  defaultStartTimeoutMs,
  startControllableServer,
  withTemporaryDirectory,
} from './server-launcher.js';
import type { ServerOperations } from './server-operations.js';
import { startAll } from './start-all.js';
import type { ServerStartOptions } from './start-options.js';

/** Options for {@link startRedisServers}. */
export interface RedisServerOptions extends ServerStartOptions {
  /** More `redis-server` arguments, e.g. `['--maxmemory', '10mb']`. */
  readonly extraArguments?: readonly string[];
}

const probeTimeoutMs = 2_000;

/** Redis probes and server-side commands. */
export const redisOperations: ServerOperations = {
  kind: 'redis',
  gracefulStopSignal: 'SIGTERM',
  async checkReady(target) {
    const [info] = await sendRedisCommands(
      target.host,
      target.port,
      [['INFO', 'server']],
      probeTimeoutMs,
    );
    if (typeof info !== 'string') throw new Error(`INFO server answered ${String(info)}`);
    const processId = /process_id:(\d+)/.exec(info)?.[1];
    if (Number(processId) !== target.pid) {
      throw new Error(`port ${target.port} is served by another redis-server (pid ${processId})`);
    }
  },
  async dropClientConnections(target) {
    const replies = await sendRedisCommands(
      target.host,
      target.port,
      [
        ['CLIENT', 'KILL', 'TYPE', 'normal'],
        ['CLIENT', 'KILL', 'TYPE', 'pubsub'],
      ],
      probeTimeoutMs * 5,
    );
    let closed = 0;
    for (const reply of replies) {
      if (reply instanceof RedisReplyError) throw reply;
      closed += Number(reply);
    }
    return closed;
  },
};

async function startOneRedisServer(options: RedisServerOptions): Promise<ServerHandle> {
  const executable = findExecutable(['redis-server'], 'redis-server');
  return withTemporaryDirectory('redis', (temporaryDirectory) =>
    startControllableServer({
      operations: redisOperations,
      host: '127.0.0.1',
      temporaryDirectory,
      dataDirectory: temporaryDirectory,
      logPath: join(temporaryDirectory, 'redis.log'),
      startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
      url: (port) => `redis://127.0.0.1:${port}`,
      launchSpec: (port) => ({
        command: executable,
        args: [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          temporaryDirectory,
          '--daemonize',
          'no',
          '--protected-mode',
          'no',
          '--logfile',
          '',
          ...(options.extraArguments ?? []),
        ],
        logPath: join(temporaryDirectory, 'redis.log'),
        cwd: temporaryDirectory,
        temporaryDirectory,
        ...(options.environment && { env: { ...process.env, ...options.environment } }),
      }),
    }),
  );
}

/**
 * Starts `count` independent Redis servers (for Redlock) without persistence, in parallel,
 * each on its own free port.
 *
 * When `LOCKKIT_REDIS_URLS` is set (comma-separated URLs) its first `count` servers are returned
 * instead, as handles that are not controllable; fewer URLs than `count` is an error.
 */
export async function startRedisServers(
  count: number,
  options: RedisServerOptions = {},
): Promise<ServerHandle[]> {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`startRedisServers: count must be a positive integer, got ${count}`);
  }
  const fromEnvironment =
    options.useEnvironment === false ? undefined : serversFromEnvironment('redis');
  if (fromEnvironment !== undefined) {
    if (fromEnvironment.length < count) {
      throw new Error(
        `${environmentVariables.redis} lists ${fromEnvironment.length} server(s) but ${count} ` +
          'independent Redis servers are needed: list more comma-separated URLs, or unset it.',
      );
    }
    return fromEnvironment.slice(0, count).map((server) => new ExternalServer(server));
  }
  return startAll(Array.from({ length: count }, () => () => startOneRedisServer(options)));
}

/** Starts one Redis server; see {@link startRedisServers}. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<ServerHandle> {
  const [server] = await startRedisServers(1, options);
  return server!;
}
