export { attachServer } from './attach-server.js';
export { environmentVariables } from './environment-overrides.js';
export {
  createMemberNetwork,
  type MemberNetwork,
  NetworkNamespacesUnavailableError,
} from './etcd-network.js';
export {
  type EtcdCluster,
  type EtcdMember,
  type EtcdServerOptions,
  startEtcd,
  startEtcdCluster,
} from './etcd-server.js';
export { type DebianPackage, MissingServerBinaryError } from './executables.js';
export { findFreePort } from './free-port.js';
export {
  type LockkitServers,
  type ServerRequest,
  type StartedServers,
  setupServers,
  startServers,
} from './global-setup.js';
export { type MariaDbServerOptions, startMariaDb } from './mariadb-server.js';
export { type NamespaceFirewall, namespaceFirewall } from './namespace-firewall.js';
export { type PostgresServerOptions, startPostgres } from './postgres-server.js';
export { ServerStartError } from './readiness.js';
export {
  type RedisCluster,
  type RedisClusterOptions,
  type SlotMove,
  startRedisCluster,
} from './redis-cluster.js';
export {
  type RedisSentinelOptions,
  type RedisSentinelSetup,
  startRedisSentinel,
} from './redis-sentinel.js';
export { type RedisServerOptions, startRedisServer, startRedisServers } from './redis-server.js';
export type { ServerHandle, ServerInfo, ServerKind } from './server-handle.js';
export {
  mariaDbLogin,
  postgresLogin,
  type SessionLogin,
  type SessionSwappingProxy,
  startSessionSwappingProxy,
} from './session-swapping-proxy.js';
export type { ServerStartOptions } from './start-options.js';
export { startTcpRelay, type TcpRelay, type TcpRelayOptions } from './tcp-relay.js';
export {
  startZooKeeperEnsemble,
  type ZooKeeperEnsemble,
  type ZooKeeperMember,
} from './zookeeper-ensemble.js';
export { startZooKeeper, type ZooKeeperServerOptions } from './zookeeper-server.js';
