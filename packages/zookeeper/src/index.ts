export { lockParentPath } from './lock-nodes.js';
export {
  ACQUIRED_MARKER,
  type Decision,
  decide,
  nodePrefixes,
  nodePrefixOf,
  parseNode,
  type QueueNode,
  queueOf,
} from './lock-recipes.js';
export {
  type WatchNotification,
  type WatchPurpose,
  zookeeperChannelNames,
} from './watch-events.js';
export type {
  ZooKeeperAcl,
  ZooKeeperClient,
  ZooKeeperEvent,
  ZooKeeperException,
  ZooKeeperStat,
} from './zookeeper-client.js';
export { type ZooKeeperGrant, ZooKeeperLockBackend } from './zookeeper-lock-backend.js';
export {
  createZooKeeperLockProvider,
  ZooKeeperLockProvider,
} from './zookeeper-lock-provider.js';
export type { ZooKeeperAuth, ZooKeeperLockProviderOptions } from './zookeeper-options.js';
