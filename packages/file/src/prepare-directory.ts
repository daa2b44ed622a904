/**
 * A provider's first file-system work: create the lock directory, sweep spare directories
 * left by dead processes of this host (SIGKILLed before their exit hook could run), probe
 * whether the file system keeps sub-second mtimes (FAT and HFS+ do not), and let
 * proper-lockfile run its own precision probe once, on a scratch directory.
 *
 * @module
 */

import type { FileLockContext } from './file-lock-context.js';
import { unavailable } from './file-system.js';
import { childPath, localPidOf } from './lock-paths.js';

/** Prepares the directory of `context` (idempotent; safe to run in several processes). */
export async function prepareDirectory(context: FileLockContext): Promise<void> {
  const { fs, pool, staleness } = context;
  await fs.mkdirp(pool.sparesDir).catch((error: unknown) => {
    throw unavailable(`mkdir ${pool.sparesDir}`, error);
  });
  const names = await fs.readdir(pool.sparesDir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = localPidOf(name);
    if (pid !== undefined && pid !== process.pid && !isAlive(pid)) {
      await fs.removeTree(childPath(pool.sparesDir, name)).catch(() => undefined);
    }
  }
  const probe = await pool.takeBare();
  try {
    const written = Math.floor(Date.now() / 1000) * 1000 - 1000 + 123;
    await fs.touch(probe, written);
    staleness.setCoarseTimestamps(Math.round(await fs.mtimeMs(probe)) !== written);
  } catch (error) {
    throw unavailable(`probe mtime precision in ${pool.sparesDir}`, error);
  } finally {
    pool.giveBare(probe);
  }
  await context.dirs.warmUp(pool.freshPath()).catch((error: unknown) => {
    throw unavailable(`lock a scratch directory in ${pool.sparesDir}`, error);
  });
}

/** True if a process with this pid exists (EPERM: it exists but is not ours). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
