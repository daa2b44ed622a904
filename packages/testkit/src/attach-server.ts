import { ControllableServer } from './controllable-server.js';
import { environmentVariables } from './environment-overrides.js';
import { etcdOperations } from './etcd-server.js';
import { ExternalServer } from './external-server.js';
import { ForeignProcess } from './managed-process.js';
import { mariaDbOperations } from './mariadb-server.js';
import { postgresOperations } from './postgres-server.js';
import { redisOperations } from './redis-server.js';
import type { ServerHandle, ServerInfo, ServerKind } from './server-handle.js';
import type { ServerOperations } from './server-operations.js';
import { zooKeeperOperations } from './zookeeper-server.js';

const operationsByKind: Readonly<Record<ServerKind, ServerOperations>> = {
  redis: redisOperations,
  postgres: postgresOperations,
  mariadb: mariaDbOperations,
  zookeeper: zooKeeperOperations,
  etcd: etcdOperations,
};

/**
 * Rebuilds a handle from a {@link ServerInfo}, typically one that vitest's global setup
 * provided (`inject('lockkitServers')`), so that a test worker can inject faults into a server
 * another process started: `pause`, `resume`, `kill`, `stop` and `dropClientConnections` work
 * (signals by pid work across processes); `restart` rejects, since the server belongs to the
 * process that started it. An info with `controllable: false` gives a handle whose fault hooks
 * reject.
 */
export function attachServer(info: ServerInfo): ServerHandle {
  if (!info.controllable) {
    return new ExternalServer({
      kind: info.kind,
      url: info.url,
      host: info.host,
      port: info.port,
      environmentVariable: info.environmentVariable ?? environmentVariables[info.kind],
    });
  }
  const { pid, temporaryDirectory, logPath } = info;
  if (pid === undefined || temporaryDirectory === undefined || logPath === undefined) {
    throw new Error(
      `attachServer: the ${info.kind} server info for ${info.url} lacks its pid, temporary ` +
        'directory or log path (was it described after stop()?)',
    );
  }
  return new ControllableServer({
    operations: operationsByKind[info.kind],
    host: info.host,
    port: info.port,
    url: info.url,
    temporaryDirectory,
    dataDirectory: info.dataDirectory,
    logPath,
    command: info.command ?? [],
    process: new ForeignProcess(pid),
  });
}
