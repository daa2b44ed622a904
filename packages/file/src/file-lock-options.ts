import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Capabilities, InvalidArgumentError } from '@lockkit/core';
import {
  booleanOption,
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  PROVIDER_OPTION_KEYS,
  stringOption,
} from '@lockkit/core/backend';
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
   * Lease length in ms (proper-lockfile's `stale`). A holder's lock directory (or reader's
   * marker) is refreshed every `max(1000, leaseMs / 3)`; one untouched for longer than
   * `leaseMs` is abandoned and the next contender takes the lock over. This bounds how long a
   * crashed holder blocks others. Integer in [2000, 2^31-1] (proper-lockfile's minimum);
   * keep it ≥ 6000 on file systems with 1–2 s timestamps.
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
  readonly owner: string | undefined;
  readonly leaseMs: number;
  readonly autoExtend: boolean;
  readonly pollIntervalMs: number;
  readonly io: FileIo;
}

const knownKeys = [
  ...PROVIDER_OPTION_KEYS,
  'directory',
  'leaseMs',
  'autoExtend',
  'pollIntervalMs',
  'io',
] as const;

/** Validates options (throws InvalidArgumentError) and fills in defaults. */
export function resolveFileOptions(options: FileLockProviderOptions): ResolvedFileOptions {
  checkOptionKeys(options, knownKeys, 'file lock provider');
  const namespace = stringOption('namespace', options.namespace, '');
  // Core's provider checks it too; checked here as well so a bad one fails before the backend exists.
  const owner = options.owner === undefined ? undefined : stringOption('owner', options.owner, '');
  const directory = resolveDirectory(options.directory);
  // proper-lockfile's `stale` is at least 2000 ms.
  const leaseMs = numberOption('leaseMs', options.leaseMs, { default: 30_000, min: 2000 });
  const autoExtend = booleanOption('autoExtend', options.autoExtend, true);
  const pollIntervalMs = numberOption('pollIntervalMs', options.pollIntervalMs, {
    default: Math.min(1000, leaseMs / 3),
    min: 1,
    integer: false,
  });
  const io = options.io ?? 'sync';
  if (io !== 'sync' && io !== 'async') {
    throw new InvalidArgumentError(`io must be 'sync' or 'async', got ${String(io)}`);
  }
  return Object.freeze({
    directory,
    namespace,
    owner,
    leaseMs,
    autoExtend,
    pollIntervalMs,
    io,
  });
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

/** The capabilities of a file backend with this lease. */
export function fileCapabilities(leaseMs: number): Capabilities {
  return {
    crossProcess: true,
    // A mutex or writer is a proper-lockfile lock directory whose heartbeat and compromise
    // check live in the library's in-process state; another process cannot adopt it.
    handOver: false,
    leases: true,
    // The lease length is the directory's staleness rule (every contender applies its own
    // provider's leaseMs), so it cannot be chosen per hold.
    minLeaseMs: Number.POSITIVE_INFINITY,
    weightedPermits: true, // a holder's marker weighs its permits; a waiting one keeps the gate
    fifo: false,
    // Each hold's record file names its owner, since and token (hold-records.ts); a break
    // claims the holders' markers.
    inspection: true,
    // A removed marker is noticed at the next extension (every leaseMs / 3).
    lostDetectionMs: Math.ceil(leaseMs / 3) + 250,
    // A dead holder's marker turns stale leaseMs after its last heartbeat; waiters wake then.
    abandonedReleaseMs: leaseMs + 250,
    // No wait of its own: a directory that cannot be used (ENOTDIR, EROFS, gone) fails the
    // first file-system call as soon as the kernel answers; scheduling slack only.
    unavailableMs: 250,
  };
}
