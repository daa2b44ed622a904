import { chmod, chown, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ClientConfig } from 'pg';
import { serversFromEnvironment } from './environment-overrides.js';
import {
  defaultSearchDirectories,
  findExecutable,
  postgresBinaryDirectories,
} from './executables.js';
import { ExternalServer } from './external-server.js';
import { describeLogTail } from './log-tail.js';
import { runToCompletion } from './managed-process.js';
import type { ServerHandle } from './server-handle.js';
import {
  defaultStartTimeoutMs,
  startControllableServer,
  withTemporaryDirectory,
} from './server-launcher.js';
import type { ServerOperations } from './server-operations.js';
import type { ServerStartOptions } from './start-options.js';
import { lookUpUser, runningAsRoot, type UserIds } from './system-users.js';

/** Options for {@link startPostgres}. */
export interface PostgresServerOptions extends ServerStartOptions {
  /** More server settings, passed as `-c name=value`, e.g. `{ max_connections: '200' }`. */
  readonly settings?: Readonly<Record<string, string>>;
}

const probeTimeoutMs = 2_000;

/** Settings for a small, fast, throwaway server (durable enough to survive a SIGKILL). */
const leanSettings: Readonly<Record<string, string>> = {
  fsync: 'off',
  full_page_writes: 'off',
  shared_buffers: '16MB',
  max_connections: '100',
  autovacuum: 'off',
  wal_level: 'minimal',
  max_wal_senders: '0',
  max_worker_processes: '2',
  max_parallel_workers: '0',
  logging_collector: 'off',
  huge_pages: 'off',
};

async function withClient<Result>(
  url: string,
  body: (client: import('pg').Client) => Promise<Result>,
): Promise<Result> {
  const { Client } = await import('pg');
  const config: ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: probeTimeoutMs,
    query_timeout: probeTimeoutMs * 5,
  };
  const client = new Client(config);
  client.on('error', () => {
    // A failed probe surfaces through the rejected promise below.
  });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** PostgreSQL probes and server-side commands. */
export const postgresOperations: ServerOperations = {
  kind: 'postgres',
  gracefulStopSignal: 'SIGINT',
  async checkReady(target) {
    await withClient(target.url, async (client) => {
      const result = await client.query<{ data_directory: string }>('SHOW data_directory');
      const dataDirectory = result.rows[0]?.data_directory;
      if (target.dataDirectory !== undefined && dataDirectory !== target.dataDirectory) {
        throw new Error(`port ${target.port} is served by another PostgreSQL (${dataDirectory})`);
      }
    });
  },
  dropClientConnections(target) {
    return withClient(target.url, async (client) => {
      // PostgreSQL 14+ can wait until each backend is gone.
      const version = await client.query<{ v: string }>(
        "SELECT current_setting('server_version_num') AS v",
      );
      const wait = Number(version.rows[0]?.v) >= 140_000 ? ', 5000' : '';
      const result = await client.query<{ closed: number }>(
        `SELECT count(*)::int AS closed FROM (
           SELECT pg_terminate_backend(pid${wait}) AS terminated FROM pg_stat_activity
           WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
         ) AS attempts WHERE terminated`,
      );
      return result.rows[0]?.closed ?? 0;
    });
  },
};

function serverEnvironment(): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('PG')) environment[name] = value;
  }
  environment['LC_ALL'] = 'C';
  return environment;
}

/** Root may not run PostgreSQL: use the `postgres` account then. */
function serverUser(): UserIds | undefined {
  if (!runningAsRoot()) return undefined;
  const user = lookUpUser('postgres');
  if (user === undefined) {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no "postgres" user: install the Debian ' +
        'package "postgresql" (it creates the user) or run the tests as a non-root user.',
    );
  }
  return user;
}

async function ownedDirectory(path: string, user: UserIds | undefined): Promise<string> {
  await mkdir(path, { mode: 0o700 });
  if (user !== undefined) await chown(path, user.uid, user.gid);
  return path;
}

async function startLocalPostgres(options: PostgresServerOptions): Promise<ServerHandle> {
  const initdb = findExecutable(['initdb'], 'postgresql', [
    ...postgresBinaryDirectories(),
    ...defaultSearchDirectories(),
  ]);
  const postgres = findExecutable(['postgres'], 'postgresql', [dirname(initdb)]);
  const user = serverUser();
  const ids = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  const environment = serverEnvironment();
  return withTemporaryDirectory('postgres', async (temporaryDirectory) => {
    // The server's user must be able to reach its directories inside ours.
    if (user !== undefined) await chmod(temporaryDirectory, 0o755);
    const dataDirectory = await ownedDirectory(join(temporaryDirectory, 'data'), user);
    const socketDirectory = await ownedDirectory(join(temporaryDirectory, 'socket'), user);
    const initdbLog = join(temporaryDirectory, 'initdb.log');
    const initdbArgs = ['-D', dataDirectory, '-U', 'postgres', '--auth=trust', '--no-sync'];
    try {
      await runToCompletion(
        {
          command: initdb,
          args: [...initdbArgs, '--no-instructions', '-E', 'UTF8', '--locale=C'],
          logPath: initdbLog,
          cwd: temporaryDirectory,
          env: environment,
          temporaryDirectory,
          ...ids,
        },
        60_000,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${describeLogTail(initdbLog)}`, {
        cause: error,
      });
    }
    const settings: Record<string, string> = {
      ...leanSettings,
      ...options.settings,
      listen_addresses: '127.0.0.1',
      unix_socket_directories: socketDirectory,
    };
    const logPath = join(temporaryDirectory, 'postgres.log');
    return startControllableServer({
      operations: postgresOperations,
      host: '127.0.0.1',
      temporaryDirectory,
      dataDirectory,
      logPath,
      startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
      url: (port) => `postgres://postgres@127.0.0.1:${port}/postgres`,
      launchSpec: (port) => ({
        command: postgres,
        args: [
          '-D',
          dataDirectory,
          '-p',
          String(port),
          ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
        ],
        logPath,
        cwd: temporaryDirectory,
        env: { ...environment, ...options.environment },
        temporaryDirectory,
        ...ids,
      }),
    });
  });
}

/**
 * Starts a throwaway PostgreSQL server (`initdb` + `postgres`, trust authentication, user and
 * database `postgres`) on a free port: `postgres://postgres@127.0.0.1:PORT/postgres`.
 * As root it runs as the `postgres` user. When `LOCKKIT_POSTGRES_URL` is set, returns a handle
 * for that server instead, which is not controllable.
 */
export async function startPostgres(options: PostgresServerOptions = {}): Promise<ServerHandle> {
  const fromEnvironment =
    options.useEnvironment === false ? undefined : serversFromEnvironment('postgres');
  if (fromEnvironment?.[0] !== undefined) return new ExternalServer(fromEnvironment[0]);
  return startLocalPostgres(options);
}
