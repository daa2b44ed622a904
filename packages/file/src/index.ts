export { fencingCounterOf } from './fencing-counter.js';
export { type FileGrant, FileLockBackend, fileCapabilities } from './file-lock-backend.js';
export type { FileLockProviderOptions, ResolvedFileOptions } from './file-lock-options.js';
export { createFileLockProvider, FileLockProvider } from './file-lock-provider.js';
export type { FileIo } from './file-system.js';
export { keyDirName } from './lock-paths.js';
