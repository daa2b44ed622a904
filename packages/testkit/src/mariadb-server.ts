import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { serversFromEnvironment } from './environment-overrides.js';
import { findExecutable } from './executables.js';
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
import { runningAsRoot } from './system-users.js';

/** Options for {@link startMariaDb}. */
export interface MariaDbServerOptions extends ServerStartOptions {
  /** More `mariadbd` arguments, e.g. `['--max-connections=500']`. */
  readonly extraArguments?: readonly string[];
}

const probeTimeoutMs = 2_000;
/** MariaDB's "Unknown thread id" error: the connection ended before KILL reached it. */
const noSuchThread = 1094;

/** InnoDB settings for a small, fast, throwaway server (durable enough to survive a SIGKILL). */
const innodbArguments = [
  '--innodb-buffer-pool-size=32M',
  '--innodb-log-file-size=8M',
  '--innodb-log-buffer-size=4M',
  '--innodb-flush-log-at-trx-commit=2',
  '--innodb-doublewrite=0',
  '--innodb-use-native-aio=0',
];

async function withConnection<Result>(
  url: string,
  body: (connection: Connection) => Promise<Result>,
): Promise<Result> {
  const { createConnection } = await import('mysql2/promise');
  const connection = await createConnection({ uri: url, connectTimeout: probeTimeoutMs });
  connection.on('error', () => {
    // A failed probe surfaces through the rejected promise below.
  });
  try {
    return await body(connection);
  } finally {
    await connection.end().catch(() => connection.destroy());
  }
}

function withoutDatabase(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = '/';
  return parsed.toString();
}

/** MariaDB probes and server-side commands. */
export const mariaDbOperations: ServerOperations = {
  kind: 'mariadb',
  gracefulStopSignal: 'SIGTERM',
  async checkReady(target) {
    await withConnection(withoutDatabase(target.url), async (connection) => {
      const [rows] = await connection.query({
        sql: 'SELECT @@datadir AS dataDirectory',
        timeout: probeTimeoutMs,
      });
      const dataDirectory = (rows as { dataDirectory: string }[])[0]?.dataDirectory;
      const expected = target.dataDirectory;
      if (expected !== undefined && dataDirectory?.replace(/\/$/, '') !== expected) {
        throw new Error(`port ${target.port} is served by another MariaDB (${dataDirectory})`);
      }
    });
  },
  dropClientConnections(target) {
    return withConnection(withoutDatabase(target.url), async (connection) => {
      const [rows] = await connection.query(
        `SELECT ID AS id FROM information_schema.PROCESSLIST
         WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Killed')
           AND USER NOT IN ('system user', 'event_scheduler')`,
      );
      let closed = 0;
      for (const { id } of rows as { id: number }[]) {
        try {
          await connection.query(`KILL CONNECTION ${Number(id)}`);
          closed += 1;
        } catch (error) {
          if ((error as { errno?: number }).errno !== noSuchThread) throw error;
        }
      }
      return closed;
    });
  },
};

async function startLocalMariaDb(options: MariaDbServerOptions): Promise<ServerHandle> {
  const installDb = findExecutable(['mariadb-install-db', 'mysql_install_db'], 'mariadb-server');
  const server = findExecutable(['mariadbd', 'mysqld'], 'mariadb-server');
  const asRoot = runningAsRoot() ? ['--user=root'] : [];
  return withTemporaryDirectory('mariadb', async (temporaryDirectory) => {
    const dataDirectory = join(temporaryDirectory, 'data');
    await mkdir(dataDirectory);
    const installLog = join(temporaryDirectory, 'install-db.log');
    try {
      await runToCompletion(
        {
          command: installDb,
          args: [
            '--no-defaults',
            `--datadir=${dataDirectory}`,
            '--auth-root-authentication-method=normal',
            '--skip-test-db',
            ...asRoot,
            ...innodbArguments,
          ],
          logPath: installLog,
          cwd: temporaryDirectory,
          temporaryDirectory,
        },
        60_000,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${describeLogTail(installLog)}`, {
        cause: error,
      });
    }
    const logPath = join(temporaryDirectory, 'mariadb.log');
    return startControllableServer({
      operations: mariaDbOperations,
      host: '127.0.0.1',
      temporaryDirectory,
      dataDirectory,
      logPath,
      startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
      url: (port) => `mysql://root@127.0.0.1:${port}/test`,
      launchSpec: (port) => ({
        command: server,
        args: [
          '--no-defaults',
          `--datadir=${dataDirectory}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          `--socket=${join(temporaryDirectory, 'mariadb.sock')}`,
          `--pid-file=${join(temporaryDirectory, 'mariadb.pid')}`,
          `--tmpdir=${temporaryDirectory}`,
          ...asRoot,
          '--skip-log-bin',
          '--skip-name-resolve',
          '--performance-schema=OFF',
          '--max-connections=200',
          '--character-set-server=utf8mb4',
          '--collation-server=utf8mb4_general_ci',
          ...innodbArguments,
          ...(options.extraArguments ?? []),
        ],
        logPath,
        cwd: temporaryDirectory,
        temporaryDirectory,
        ...(options.environment && { env: { ...process.env, ...options.environment } }),
      }),
      async afterFirstStart(target) {
        await withConnection(withoutDatabase(target.url), (connection) =>
          connection.query('CREATE DATABASE IF NOT EXISTS test'),
        );
      },
    });
  });
}

/**
 * Starts a throwaway MariaDB server (`mariadb-install-db` + `mariadbd`, `root` without a
 * password, a `test` database) on a free port: `mysql://root@127.0.0.1:PORT/test`.
 * When `LOCKKIT_MYSQL_URL` is set, returns a handle for that server instead, which is not
 * controllable.
 */
export async function startMariaDb(options: MariaDbServerOptions = {}): Promise<ServerHandle> {
  const fromEnvironment =
    options.useEnvironment === false ? undefined : serversFromEnvironment('mariadb');
  if (fromEnvironment?.[0] !== undefined) return new ExternalServer(fromEnvironment[0]);
  return startLocalMariaDb(options);
}
