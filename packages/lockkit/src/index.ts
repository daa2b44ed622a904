export * from '@lockkit/core';
export {
  type BackendNotInstalledDetails,
  BackendNotInstalledError,
} from './backend-not-installed-error.js';
export {
  type BackendId,
  type BackendInfo,
  backends,
  type OptionType,
  schemes,
} from './backends.js';
export { createLockProvider } from './create-lock-provider.js';
export {
  type BackendModules,
  type CreateLockProviderOptions,
  type LockUrl,
  parseLockUrl,
} from './parse-lock-url.js';
export { redactUrl } from './redact-url.js';
