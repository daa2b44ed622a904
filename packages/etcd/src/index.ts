export { type EtcdGrant, EtcdLockBackend } from './etcd-lock-backend.js';
export { createEtcdLockProvider, EtcdLockProvider } from './etcd-lock-provider.js';
export type { EtcdAuth, EtcdLockProviderOptions, EtcdTls } from './etcd-options.js';
export {
  contenderKey,
  keyTags,
  kindOfKey,
  lockPrefix,
  permitsOfKey,
  prefixEnd,
} from './lock-keys.js';
export { type Decision, decide, type QueueEntry } from './lock-queue.js';
