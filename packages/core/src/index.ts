export {
  type AcquireTarget,
  acquireAll,
  type CompositeLockHandle,
  tryAcquireAll,
} from './acquire-all.js';
export type {
  Grant,
  LeaseInfo,
  LockBackend,
  LockRequest,
  ReleaseWatch,
  WaitContext,
} from './backend.js';
export { channelNames, type LockEvent } from './diagnostics.js';
export { BackendUnavailableError } from './errors/backend-unavailable-error.js';
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
export {
  base32,
  int64Key,
  KEY_MAPPING_VERSION,
  type KeyFamily,
  keyFamily,
  nameDigest,
  type ReadableKeyOptions,
  readableKey,
} from './keys.js';
export { grantOf } from './lock-handle.js';
export { LockProvider, type LockProviderOptions } from './lock-provider.js';
export {
  createMemoryLockProvider,
  MemoryBackend,
  type MemoryGrant,
  MemoryLockProvider,
  type MemoryLockProviderOptions,
} from './memory/memory-lock-provider.js';
export { defaultMemoryStore, MemoryLockStore } from './memory/memory-lock-store.js';
export { grantBehind, unwrapHandle, withNamePrefix } from './name-prefix.js';
export {
  booleanOption,
  checkOptionKeys,
  type NumberOptionRule,
  numberOption,
  stringOption,
} from './option-validation.js';
export {
  type Deadline,
  DeadlineTimer,
  delay,
  jitter,
  now,
  untilAborted,
  Wakeup,
} from './timing.js';
export type {
  AcquireOptions,
  Capabilities,
  IDistributedLock,
  ILockProvider,
  IReadWriteLock,
  ISemaphore,
  LockHandle,
  LockKind,
} from './types.js';
export {
  MAX_COUNT,
  MAX_TIMEOUT_MS,
  type ValidAcquireOptions,
  validateAcquireOptions,
  validateMaxCount,
  validateName,
  validateTimeout,
} from './validation.js';
