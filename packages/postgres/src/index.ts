export { advisoryKey, gateKey, releaseChannel, slotKey } from './advisory-keys.js';
export type { PostgresGrant, SemaphoreSlot } from './postgres-grant.js';
export { PostgresLockBackend } from './postgres-lock-backend.js';
export {
  type PostgresLockProviderOptions,
  type ResolvedPostgresOptions,
  resolvePostgresOptions,
} from './postgres-lock-options.js';
export { createPostgresLockProvider, PostgresLockProvider } from './postgres-lock-provider.js';
export type {
  TransactionLock,
  TransactionLockKind,
  TransactionLockOptions,
} from './transaction-lock.js';
