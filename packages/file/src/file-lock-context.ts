import type { Grant } from '@lockkit/core/backend';
import type { FencingCounters } from './fencing-counter.js';
import type { MarkerContext } from './holder-markers.js';
import type { LockDirs } from './lock-dirs.js';

/** What the lock algorithms share inside one provider. */
export interface FileLockContext extends MarkerContext {
  readonly counters: FencingCounters;
  readonly dirs: LockDirs;
}

/** A file-system grant: our marker directory and, for lock-directory holds, the lock directory. */
export interface FileGrant extends Grant {
  /**
   * Absolute path of our marker: its presence is our ownership. A reader's or permit's
   * marker mtime is its heartbeat; a lock directory's own mtime is (proper-lockfile's).
   */
  readonly marker: string;
  /** The lock directory (`…/lock` or `…/gate`) for a mutex or writer; undefined for a reader or permit. */
  readonly lockDir: string | undefined;
  /** The hold record (`h.<marker name>` in the key directory: hold-records.ts). */
  readonly record: string;
}
