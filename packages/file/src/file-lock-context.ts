import type { FencingCounters } from './fencing-counter.js';
import type { MarkerContext } from './holder-markers.js';
import type { LockDirs } from './lock-dirs.js';

/** What the lock algorithms share inside one provider. */
export interface FileLockContext extends MarkerContext {
  readonly counters: FencingCounters;
  readonly dirs: LockDirs;
}
