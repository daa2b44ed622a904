/**
 * `@lockkit/core/backend`: what a backend author needs and an application does not — the
 * backend contract (`LockBackend` and its types), the `LockProvider` that wraps a backend,
 * the versioned name → key helpers and their memo, option checks, timing helpers, the grant
 * behind a handle and the handle behind a leadership (for fault hooks). Applications import
 * `@lockkit/core` (or `lockkit`).
 *
 * @module
 */
export type {
  Grant,
  GrantData,
  LeaseInfo,
  LockBackend,
  LockRequest,
  ReleaseWatch,
  WaitContext,
} from './backend.js';
export { ContentionMemo } from './contention-memo.js';
export { leadershipHandle } from './election/leadership-term.js';
export { defaultOwnerLabel } from './inspection.js';
export {
  base32,
  int64Key,
  KEY_MAPPING_VERSION,
  type KeyFamily,
  keyFamily,
  memoizeKeys,
  nameDigest,
  type ReadableKeyOptions,
  readableKey,
} from './keys.js';
export { grantOf } from './lock-handle.js';
export {
  LockProvider,
  type LockProviderOptions,
  PROVIDER_OPTION_KEYS,
} from './lock-provider.js';
export type { BackendLockState, LockHolder } from './lock-state.js';
export { MemoryBackend, type MemoryGrant } from './memory/memory-lock-provider.js';
export { grantBehind } from './name-prefix.js';
export {
  booleanOption,
  checkOptionKeys,
  type NumberOptionRule,
  numberOption,
  stringOption,
} from './option-validation.js';
export { type QueueDecision, type QueuedContender, queueDecision } from './queue-recipe.js';
export {
  type Deadline,
  DeadlineTimer,
  deadlineGraceMs,
  delay,
  jitter,
  now,
  settleWithin,
  untilAborted,
  Wakeup,
} from './timing.js';
export {
  type AcquireOptionTarget,
  assertLeaseControl,
  type ValidAcquireOptions,
  validateAcquireOptions,
  validateLeaseMs,
  validateMaxCount,
  validateName,
  validateSignal,
  validateTimeout,
} from './validation.js';
