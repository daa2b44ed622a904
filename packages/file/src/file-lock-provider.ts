import { LockProvider } from '@lockkit/core/backend';
import { type FileGrant, FileLockBackend } from './file-lock-backend.js';
import { type FileLockProviderOptions, resolveFileOptions } from './file-lock-options.js';

/**
 * A lock provider on a lock directory: mutex, read-write lock (writer preference) and
 * semaphore for every process that shares the directory. See the package README for the
 * on-disk layout, the guarantees and the caveats (clock skew, network file systems).
 */
export class FileLockProvider extends LockProvider<FileGrant> {
  /** The absolute path of the lock directory. */
  readonly directory: string;
  /** Lease length in ms (a dead holder's lock is taken over after at most this long). */
  readonly leaseMs: number;

  constructor(options: FileLockProviderOptions) {
    const resolved = resolveFileOptions(options);
    super(new FileLockBackend(resolved), {
      namespace: resolved.namespace,
      owner: resolved.owner,
    });
    this.directory = resolved.directory;
    this.leaseMs = resolved.leaseMs;
  }
}

/**
 * Creates a file-system lock provider:
 *
 * ```ts
 * const locks = createFileLockProvider({ directory: '/var/lock/my-app' });
 * await using handle = await locks.createLock('orders').acquire({ timeout: 5000 });
 * ```
 */
export function createFileLockProvider(options: FileLockProviderOptions): FileLockProvider {
  return new FileLockProvider(options);
}
