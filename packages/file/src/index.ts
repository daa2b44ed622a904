export { fencingCounterOf } from './fencing-counter.js';
export { type FileGrant, FileLockBackend } from './file-lock-backend.js';
export {
  type FileLockProviderOptions,
  fileCapabilities,
  type ResolvedFileOptions,
} from './file-lock-options.js';
export { createFileLockProvider, FileLockProvider } from './file-lock-provider.js';
export type { FileIo } from './file-system.js';
export { hostTag, keyDirName } from './lock-paths.js';
