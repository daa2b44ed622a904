import { FencingCounters } from './fencing-counter.js';
import type { FileLockContext } from './file-lock-context.js';
import type { ResolvedFileOptions } from './file-lock-options.js';
import { fileOpsFor } from './file-system.js';
import { LockDirs } from './lock-dirs.js';
import { childPath, SPARES_DIR } from './lock-paths.js';
import { SparePool } from './spare-pool.js';
import { Staleness } from './staleness.js';

/** What one provider's lock algorithms share: file calls, spares, staleness, counters. */
export function createFileLockContext(options: ResolvedFileOptions): FileLockContext {
  const fs = fileOpsFor(options.io);
  const pool = new SparePool(fs, childPath(options.directory, SPARES_DIR));
  const staleness = new Staleness(options.leaseMs);
  return {
    fs,
    pool,
    staleness,
    counters: new FencingCounters(fs),
    dirs: new LockDirs({ fs, pool, staleness }, options.io),
  };
}
