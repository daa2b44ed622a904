import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError, type LockProviderOptions, MAX_TIMEOUT_MS } from '@lockkit/core';
import type { FileIo } from './file-system.js';

/** Options of {@link createFileLockProvider}. Validated at construction, before any I/O. */
export interface FileLockProviderOptions extends LockProviderOptions {
  /**
   * The lock directory: a path (relative paths are resolved against the current working
   * directory at construction) or a `file:` URL. Created on first use. Every process that
   * shares locks must use the same directory, on a file system they all see.
   */
  readonly directory: string | URL;
  /**
   * Lease length in ms (proper-lockfile's `stale`). A holder refreshes its marker's mtime
   * every `leaseMs / 3`; a marker untouched for longer than `leaseMs` is abandoned and the
   * next contender takes the lock over. This bounds how long a crashed holder blocks
   * others. Integer in [100, 2^31-1]; keep it ≥ 6000 on file systems with 1–2 s timestamps.
   * @defaultValue 30000
   */
  readonly leaseMs?: number | undefined;
  /**
   * Refresh the lease automatically while a handle is held. With `false` a hold lasts at
   * most `leaseMs` (then `handle.signal` aborts with `LockLostError`).
   * @defaultValue true
   */
  readonly autoExtend?: boolean | undefined;
  /**
   * Safety poll in ms while waiting (core adds ±20 % jitter). Waiters are woken by `fs.watch`
   * and by a timer at the holder's stale time; the poll covers missed events (network file
   * systems do not report other machines' changes: lower it there).
   * @defaultValue `min(1000, leaseMs / 3)`
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * How file-system calls are made. `'sync'`: each call runs synchronously — a local
   * metadata call takes microseconds, less than a thread-pool round trip, which makes
   * lockkit faster than proper-lockfile. `'async'`: calls go through libuv's thread pool, so
   * a stalled network file system never blocks the event loop.
   * @defaultValue 'sync'
   */
  readonly io?: FileIo | undefined;
}

/** Options after validation and defaults. */
export interface ResolvedFileOptions {
  readonly directory: string;
  readonly namespace: string;
  readonly leaseMs: number;
  readonly autoExtend: boolean;
  readonly pollIntervalMs: number;
  readonly io: FileIo;
}

const knownKeys = new Set([
  'directory',
  'namespace',
  'leaseMs',
  'autoExtend',
  'pollIntervalMs',
  'io',
]);

/** Validates options (throws InvalidArgumentError) and fills in defaults. */
export function resolveFileOptions(options: FileLockProviderOptions): ResolvedFileOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('File lock provider options must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!knownKeys.has(key)) {
      throw new InvalidArgumentError(
        `Unknown option "${key}" (known: ${[...knownKeys].join(', ')})`,
      );
    }
  }
  const namespace = options.namespace ?? '';
  if (typeof namespace !== 'string') throw new InvalidArgumentError('namespace must be a string');
  const directory = resolveDirectory(options.directory);
  const leaseMs = options.leaseMs ?? 30_000;
  if (
    typeof leaseMs !== 'number' ||
    !Number.isInteger(leaseMs) ||
    leaseMs < 100 ||
    leaseMs > MAX_TIMEOUT_MS
  ) {
    throw new InvalidArgumentError(
      `leaseMs must be an integer from 100 to ${MAX_TIMEOUT_MS}, got ${String(leaseMs)}`,
    );
  }
  const autoExtend = options.autoExtend ?? true;
  if (typeof autoExtend !== 'boolean')
    throw new InvalidArgumentError('autoExtend must be a boolean');
  const pollIntervalMs = options.pollIntervalMs ?? Math.min(1000, leaseMs / 3);
  if (
    typeof pollIntervalMs !== 'number' ||
    Number.isNaN(pollIntervalMs) ||
    pollIntervalMs < 1 ||
    pollIntervalMs > MAX_TIMEOUT_MS
  ) {
    throw new InvalidArgumentError(
      `pollIntervalMs must be a number from 1 to ${MAX_TIMEOUT_MS}, got ${String(pollIntervalMs)}`,
    );
  }
  const io = options.io ?? 'sync';
  if (io !== 'sync' && io !== 'async') {
    throw new InvalidArgumentError(`io must be 'sync' or 'async', got ${String(io)}`);
  }
  return Object.freeze({ directory, namespace, leaseMs, autoExtend, pollIntervalMs, io });
}

function resolveDirectory(directory: unknown): string {
  if (directory instanceof URL) {
    if (directory.protocol !== 'file:') {
      throw new InvalidArgumentError(`directory must be a file: URL, got ${directory.protocol}`);
    }
    return fileURLToPath(directory);
  }
  if (typeof directory !== 'string' || directory === '') {
    throw new InvalidArgumentError('directory must be a non-empty path or a file: URL');
  }
  if (directory.includes('\0')) throw new InvalidArgumentError('directory must not contain NUL');
  if (directory.startsWith('file:')) {
    let url: URL;
    try {
      url = new URL(directory);
    } catch {
      throw new InvalidArgumentError(`directory is not a valid file: URL: ${directory}`);
    }
    return resolveDirectory(url);
  }
  return isAbsolute(directory) ? resolve(directory) : resolve(process.cwd(), directory);
}
