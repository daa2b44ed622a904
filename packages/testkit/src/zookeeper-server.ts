import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serversFromEnvironment } from './environment-overrides.js';
import { defaultSearchDirectories, findExecutable, findFile } from './executables.js';
import { ExternalServer } from './external-server.js';
import type { ServerHandle } from './server-handle.js';
import {
  defaultStartTimeoutMs,
  startControllableServer,
  withTemporaryDirectory,
} from './server-launcher.js';
import type { ServerOperations } from './server-operations.js';
import type { ServerStartOptions } from './start-options.js';
import {
  closeZooKeeperSession,
  parseConnectionSessionIds,
  parseSessionIds,
  sendFourLetterWord,
} from './zookeeper-protocol.js';

/** Options for {@link startZooKeeper}. */
export interface ZooKeeperServerOptions extends ServerStartOptions {
  /**
   * ZooKeeper's `tickTime`. The smallest session timeout a client can get is two ticks, so the
   * default of 200 ms lets tests use session timeouts down to 400 ms.
   */
  readonly tickTimeMs?: number;
  /** Largest session timeout a client can negotiate (`maxSessionTimeout`). Default 60 000 ms. */
  readonly maxSessionTimeoutMs?: number;
  /** More `zoo.cfg` lines, e.g. `{ 'maxClientCnxns': '100' }`. */
  readonly extraConfig?: Readonly<Record<string, string>>;
  /**
   * The JVM's heap limit in MiB (`-Xmx`). Default 128: plenty for tests; 100 000 live nodes
   * need more (the scale benchmark's server runs out of memory at 128).
   */
  readonly maxHeapMb?: number;
}

const probeTimeoutMs = 2_000;
/** How long `dropClientConnections` waits for connections left on closed sessions to go. */
const orphanGraceMs = 5_000;

/** Where Debian's `zookeeper` package puts the server and the logging binding it uses. */
const zooKeeperJars = ['/usr/share/java/zookeeper.jar'];
const loggingJar = '/usr/share/java/slf4j-simple.jar';
const debianConfigDirectory = '/etc/zookeeper/conf';

/** ZooKeeper probes and server-side commands. */
export const zooKeeperOperations: ServerOperations = {
  kind: 'zookeeper',
  gracefulStopSignal: 'SIGTERM',
  async checkReady(target) {
    const status = await sendFourLetterWord(target.host, target.port, 'srvr', probeTimeoutMs);
    if (!/^Mode: /m.test(status)) throw new Error(`srvr answered: ${status.trim()}`);
    if (target.dataDirectory !== undefined) {
      const config = await sendFourLetterWord(target.host, target.port, 'conf', probeTimeoutMs);
      if (!config.includes(`dataDir=${target.dataDirectory}`)) {
        throw new Error(`port ${target.port} is served by another ZooKeeper`);
      }
    }
  },
  async dropClientConnections(target) {
    const word = (command: string): Promise<string> =>
      sendFourLetterWord(target.host, target.port, command, probeTimeoutMs);
    const deadline = Date.now() + orphanGraceMs;
    const openSessions = async (): Promise<{ live: Set<bigint>; attached: Set<bigint> }> => {
      const [dump, cons] = await Promise.all([word('dump'), word('cons')]);
      return {
        live: new Set(parseSessionIds(dump)),
        attached: new Set(parseConnectionSessionIds(cons)),
      };
    };
    const initial = await openSessions();
    const targets = [...new Set([...initial.live, ...initial.attached])];
    let remaining = targets;
    for (;;) {
      await Promise.all(
        remaining.map((sessionId) =>
          closeZooKeeperSession(target.host, target.port, sessionId, probeTimeoutMs * 5),
        ),
      );
      const { live, attached } = await openSessions();
      remaining = targets.filter((sessionId) => live.has(sessionId) || attached.has(sessionId));
      if (remaining.length === 0) return targets.length;
      if (Date.now() > deadline) {
        const ids = remaining.map((sessionId) => `0x${sessionId.toString(16)}`).join(', ');
        throw new Error(
          `ZooKeeper on port ${target.port}: sessions ${ids} are still open or still have a ` +
            `connection ${orphanGraceMs} ms after closeSession. (A client that reconnects at the ` +
            'wrong moment can keep a connection ZooKeeper no longer maps to its closed session; ' +
            'Java clients drop it after 2/3 of the session timeout, node-zookeeper-client never ' +
            'does.)',
        );
      }
      // Sessions already closed whose client still has a connection: give the connection a
      // moment to close (the next round also reconnects to them, which cuts off any mapped one).
      if (remaining.every((sessionId) => !live.has(sessionId))) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  },
};

function findJava(): string {
  const javaHome = process.env['JAVA_HOME'];
  const directories = [
    ...(javaHome === undefined ? [] : [join(javaHome, 'bin')]),
    ...defaultSearchDirectories(),
  ];
  return findExecutable(['java'], 'zookeeper', directories);
}

/** `java` and its arguments that run ZooKeeper's `mainClass` with `configPath` (Debian's jars). */
export function zooKeeperCommand(mainClass: string, configPath: string, maxHeapMb = 128): string[] {
  const java = findJava();
  const zooKeeperJar = findFile(zooKeeperJars, 'zookeeper');
  const classPath = [
    ...(existsSync(debianConfigDirectory) ? [debianConfigDirectory] : []),
    zooKeeperJar,
    ...(existsSync(loggingJar) ? [loggingJar] : []),
  ].join(':');
  return [
    java,
    `-Xmx${maxHeapMb}m`,
    '-Xss512k',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:-UsePerfData',
    '-Djava.net.preferIPv4Stack=true',
    '-Dzookeeper.admin.enableServer=false',
    '-Dzookeeper.nio.numSelectorThreads=1',
    '-Dzookeeper.nio.numWorkerThreads=0',
    '-Dzookeeper.jmx.log4j.disable=true',
    '-Dorg.slf4j.simpleLogger.showDateTime=true',
    '-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS',
    '-cp',
    classPath,
    mainClass,
    configPath,
  ];
}

/** `zoo.cfg` lines every test server gets (`extra` last, so it can override them). */
export function zooKeeperConfig(
  options: ZooKeeperServerOptions,
  dataDirectory: string,
  clientPort: number,
  clientAddress: string,
): Record<string, string> {
  return {
    tickTime: String(options.tickTimeMs ?? 200),
    maxSessionTimeout: String(options.maxSessionTimeoutMs ?? 60_000),
    dataDir: dataDirectory,
    clientPort: String(clientPort),
    clientPortAddress: clientAddress,
    maxClientCnxns: '0',
    'admin.enableServer': 'false',
    '4lw.commands.whitelist': '*',
    // Written to the OS on every commit (so data survives a SIGKILL), never fsynced.
    forceSync: 'no',
    preAllocSize: '1024',
    ...options.extraConfig,
  };
}

async function startLocalZooKeeper(options: ZooKeeperServerOptions): Promise<ServerHandle> {
  return withTemporaryDirectory('zookeeper', async (temporaryDirectory) => {
    const dataDirectory = join(temporaryDirectory, 'data');
    await mkdir(dataDirectory);
    const configPath = join(temporaryDirectory, 'zoo.cfg');
    const logPath = join(temporaryDirectory, 'zookeeper.log');
    const mainClass = 'org.apache.zookeeper.server.ZooKeeperServerMain';
    const command = zooKeeperCommand(mainClass, configPath, options.maxHeapMb);
    const writeConfig = async (port: number): Promise<void> => {
      const config = zooKeeperConfig(options, dataDirectory, port, '127.0.0.1');
      const lines = Object.entries(config).map(([name, value]) => `${name}=${value}\n`);
      await writeFile(configPath, lines.join(''));
    };
    return startControllableServer({
      operations: zooKeeperOperations,
      host: '127.0.0.1',
      temporaryDirectory,
      dataDirectory,
      logPath,
      startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
      url: (port) => `zookeeper://127.0.0.1:${port}`,
      launchSpec: async (port) => {
        await writeConfig(port);
        return {
          command: command[0]!,
          args: command.slice(1),
          logPath,
          cwd: temporaryDirectory,
          temporaryDirectory,
          ...(options.environment && { env: { ...process.env, ...options.environment } }),
        };
      },
    });
  });
}

/**
 * Starts a throwaway standalone ZooKeeper (Debian's `zookeeper` package, run as
 * `java … ZooKeeperServerMain zoo.cfg` with a config of its own) on a free port:
 * `zookeeper://127.0.0.1:PORT`. When `LOCKKIT_ZOOKEEPER_URL` is set, returns a handle for that
 * server instead, which is not controllable.
 */
export async function startZooKeeper(options: ZooKeeperServerOptions = {}): Promise<ServerHandle> {
  const heap = options.maxHeapMb;
  if (heap !== undefined && !(Number.isInteger(heap) && heap > 0)) {
    throw new RangeError(`maxHeapMb must be a positive integer (MiB), got ${String(heap)}`);
  }
  const fromEnvironment =
    options.useEnvironment === false ? undefined : serversFromEnvironment('zookeeper');
  if (fromEnvironment?.[0] !== undefined) return new ExternalServer(fromEnvironment[0]);
  return startLocalZooKeeper(options);
}
