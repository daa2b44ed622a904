/**
 * `@lockkit/core`: the application API — the primitives' interfaces, errors, `acquireAll`,
 * the in-memory provider, the name-prefix decorator and the diagnostics channels. Backend
 * authors find the rest in `@lockkit/core/backend`.
 *
 * @module
 */
export {
  type AcquireTarget,
  acquireAll,
  type CompositeLockHandle,
  tryAcquireAll,
} from './acquire-all.js';
export { channelNames, type LockEvent, type LockLostReason } from './diagnostics.js';
export {
  BackendUnavailableError,
  type BackendUnavailableErrorOptions,
} from './errors/backend-unavailable-error.js';
export { InvalidArgumentError } from './errors/invalid-argument-error.js';
export { LockAbortedError } from './errors/lock-aborted-error.js';
export { LockDeadlockError } from './errors/lock-deadlock-error.js';
export {
  isLockError,
  LockError,
  type LockErrorCode,
  type LockErrorFields,
  type LockErrorOptions,
} from './errors/lock-error.js';
export { LockLostError } from './errors/lock-lost-error.js';
export { LockTimeoutError } from './errors/lock-timeout-error.js';
export { ProviderClosedError } from './errors/provider-closed-error.js';
export type { LockAdministration, LockHolder, LockState } from './lock-state.js';
export {
  createMemoryLockProvider,
  MemoryLockProvider,
  type MemoryLockProviderOptions,
} from './memory/memory-lock-provider.js';
export { defaultMemoryStore, MemoryLockStore } from './memory/memory-lock-store.js';
export { unwrapHandle, withNamePrefix } from './name-prefix.js';
export type {
  AcquireOptions,
  CampaignOptions,
  Capabilities,
  ElectionEvent,
  ElectionEventsOptions,
  ElectionOptions,
  IDistributedLock,
  IElection,
  ILockProvider,
  IReadWriteLock,
  ISemaphore,
  LeaderInfo,
  Leadership,
  LeadershipEnd,
  LockHandle,
  LockKind,
  SemaphoreAcquireOptions,
} from './types.js';
export {
  createUpgradeableReadWriteLock,
  type IUpgradeableReadWriteLock,
  type UpgradeableLockHandle,
  upgradeGateName,
} from './upgradeable-lock.js';
export { MAX_COUNT, MAX_TIMEOUT_MS } from './validation.js';
