/**
 * Holder markers: one directory per holder, whose presence is the ownership and whose mtime
 * is the heartbeat. A lock directory (lock-dirs.ts) holds its holder's marker; readers and
 * semaphore permits are markers directly in the key directory. Every step is a single
 * atomic call whose success depends on what is on disk, never on what we saw a moment
 * earlier:
 *
 * - claim (release, or takeover of a stale holder): `rename(marker, elsewhere)` — succeeds
 *   for exactly one caller, and only while that very marker is there. Marker names are never
 *   reused, so an old observation cannot hit a newer holder (proper-lockfile #121).
 * - tidy: `rmdir(lockDir)` — removes a lock directory only if it is still empty; a newer
 *   holder's directory is never empty, so it is never removed.
 *
 * @module
 */
import { type FileOps, isMissing, unavailable } from './file-system.js';
import { recordPath, removeRecord } from './hold-records.js';
import { childPath } from './lock-paths.js';
import type { SparePool } from './spare-pool.js';
import type { Staleness } from './staleness.js';

/** What the marker steps need of a provider's file-lock context. */
export interface MarkerContext {
  readonly fs: FileOps;
  readonly pool: SparePool;
  readonly staleness: Staleness;
}

/** Live markers found in a directory, and when the first of them would turn stale. */
export interface MarkerCensus {
  readonly live: number;
  readonly retryAtWall: number | undefined;
}

/** Sets a marker's mtime to now. False if the marker is gone (it is no longer ours). */
export async function touchMarker(context: MarkerContext, marker: string): Promise<boolean> {
  try {
    await context.fs.touch(marker, Date.now());
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw unavailable(`touch ${marker}`, error);
  }
}

/**
 * Moves the marker at `marker` into our spares (so it is reused). True for exactly one
 * caller; false if the marker was already gone.
 */
export async function claimMarker(
  context: Pick<MarkerContext, 'fs' | 'pool'>,
  marker: string,
): Promise<boolean> {
  const { fs, pool } = context;
  for (let attempt = 0; ; attempt++) {
    const target = pool.freshPath();
    try {
      await fs.rename(marker, target);
      pool.giveBare(target);
      return true;
    } catch (error) {
      if (!isMissing(error)) throw unavailable(`rename ${marker}`, error);
      // Either the marker is gone, or our spares directory is (removed behind our back).
      const markerExists = await fs.mtimeMs(marker).then(
        () => true,
        () => false,
      );
      if (!markerExists || attempt > 0) return false;
      await fs.mkdirp(pool.sparesDir).catch((e: unknown) => {
        throw unavailable(`mkdir ${pool.sparesDir}`, e);
      });
    }
  }
}

/**
 * Counts the live markers (names starting with `prefix`, or weighed by `prefix(name)`: the
 * permits a semaphore marker stands for) in `dir`, claiming stale ones on the way. With
 * `enough`, stops early (without stat calls) when the count is below `enough`.
 */
export async function censusOf(
  context: MarkerContext,
  dir: string,
  prefix: string | ((name: string) => number | undefined),
  enough = 1,
): Promise<MarkerCensus> {
  let names: string[];
  try {
    names = await context.fs.readdir(dir);
  } catch (error) {
    if (isMissing(error)) return { live: 0, retryAtWall: undefined };
    throw unavailable(`readdir ${dir}`, error);
  }
  const weigh =
    typeof prefix === 'function'
      ? prefix
      : (name: string) => (name.startsWith(prefix) ? 1 : undefined);
  const markers = names.filter((name) => weigh(name) !== undefined);
  let total = 0;
  for (const name of markers) total += weigh(name) as number;
  if (total < enough) return { live: total, retryAtWall: undefined };
  const { staleness } = context;
  const wallNow = Date.now();
  let live = 0;
  let retryAtWall: number | undefined;
  for (const name of markers) {
    const marker = childPath(dir, name);
    let mtimeMs: number;
    try {
      mtimeMs = await context.fs.mtimeMs(marker);
    } catch (error) {
      if (isMissing(error)) continue; // released meanwhile
      throw unavailable(`stat ${marker}`, error);
    }
    if (staleness.isStale(mtimeMs, wallNow)) {
      // Abandoned: exactly one claimer removes it (and its hold record).
      if (await claimMarker(context, marker)) await removeRecord(context.fs, recordPath(dir, name));
      continue;
    }
    live += weigh(name) as number;
    const at = staleness.staleAt(mtimeMs);
    retryAtWall = retryAtWall === undefined ? at : Math.min(retryAtWall, at);
  }
  return { live, retryAtWall };
}
