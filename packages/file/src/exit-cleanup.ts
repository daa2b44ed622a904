/**
 * Releases what a process still holds when it exits normally (end of the event loop,
 * `process.exit()`, an uncaught exception), like proper-lockfile's exit hook, so others need
 * not wait for the lease. The calls are synchronous (an exit handler cannot wait) and each
 * is ownership-checked: removing our own (empty) marker directory succeeds only if it is
 * still ours. A killed process (SIGKILL, power loss) runs nothing: its locks go stale.
 *
 * @module
 */
import { rmdirSync, rmSync, unlinkSync } from 'node:fs';

const cleanups = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // An exit handler must not throw; whatever is left goes stale.
    }
  }
}

/** Runs `cleanup` at process exit (until the returned function is called). */
export function onProcessExit(cleanup: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', runAll);
  }
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/**
 * Synchronous, ownership-checked release of a marker (and its lock directory, if any), and
 * removal of its hold record (ours whether or not the marker still is).
 */
export function releaseSync(marker: string, lockDir: string | undefined, record?: string): void {
  if (record !== undefined) {
    try {
      unlinkSync(record);
    } catch {
      // gone already
    }
  }
  try {
    rmdirSync(marker); // ENOENT: not ours any more — leave everything alone
  } catch {
    return;
  }
  if (lockDir === undefined) return;
  try {
    rmdirSync(lockDir);
  } catch {
    // replaced by the next holder: fine
  }
}

/** Removes a directory tree, ignoring errors. */
export function removeSync(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // best effort
  }
}
