/**
 * The lock directory (proper-lockfile's mkdir lock, hardened). A lock is held while the lock
 * path is a directory containing its holder's marker directory; the marker's mtime is the
 * heartbeat. Every step is a single atomic call whose success depends on what is on disk,
 * never on what we saw a moment earlier:
 *
 * - take: `rename(spare, lockDir)` — succeeds only if the path is absent or an EMPTY
 *   directory (a freed lock). The spare already contains our marker, so a held lock is never
 *   visible empty.
 * - claim (release, or takeover of a stale holder): `rename(lockDir/marker, elsewhere)` —
 *   succeeds for exactly one caller, and only while that very marker is there. Marker names
 *   are never reused, so an old observation cannot hit a newer holder (proper-lockfile #121).
 * - tidy: `rmdir(lockDir)` — removes the directory only if it is still empty; a newer
 *   holder's directory is never empty, so it is never removed.
 *
 * @module
 */
import { now } from '@lockkit/core';
import type { FencingCounters } from './fencing-counter.js';
import { type FileOps, isMissing, isOccupied, unavailable } from './file-system.js';
import { childPath } from './lock-paths.js';
import type { Spare, SparePool } from './spare-pool.js';
import type { Staleness } from './staleness.js';

/** What the lock algorithms share inside one provider. */
export interface FileLockContext {
  readonly fs: FileOps;
  readonly pool: SparePool;
  readonly staleness: Staleness;
  readonly counters: FencingCounters;
}

/** Outcome of one attempt: our marker, or when to look again (wall-clock ms, if known). */
export type TakeResult =
  | {
      readonly marker: string;
      /** performance.now() when the marker's mtime was last set. */
      readonly touchedAt: number;
      readonly retryAtWall?: undefined;
    }
  | { readonly marker?: undefined; readonly retryAtWall: number | undefined };

/** Live markers found in a directory, and when the first of them would turn stale. */
export interface MarkerCensus {
  readonly live: number;
  readonly retryAtWall: number | undefined;
}

/** Sets a marker's mtime to now. False if the marker is gone (it is no longer ours). */
export async function touchMarker(context: FileLockContext, marker: string): Promise<boolean> {
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
export async function claimMarker(context: FileLockContext, marker: string): Promise<boolean> {
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
 * Counts the live markers (names starting with `prefix`) in `dir`, claiming stale ones on the
 * way. With `enough`, stops early (without stat calls) when there are fewer than `enough`.
 */
export async function censusOf(
  context: FileLockContext,
  dir: string,
  prefix: string,
  enough = 1,
): Promise<MarkerCensus> {
  let names: string[];
  try {
    names = await context.fs.readdir(dir);
  } catch (error) {
    if (isMissing(error)) return { live: 0, retryAtWall: undefined };
    throw unavailable(`readdir ${dir}`, error);
  }
  const markers = prefix ? names.filter((name) => name.startsWith(prefix)) : names;
  if (markers.length < enough) return { live: markers.length, retryAtWall: undefined };
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
      await claimMarker(context, marker); // abandoned: exactly one claimer removes it
      continue;
    }
    live += 1;
    const at = staleness.staleAt(mtimeMs);
    retryAtWall = retryAtWall === undefined ? at : Math.min(retryAtWall, at);
  }
  return { live, retryAtWall };
}

/** Renames a spare onto `lockDir`; false if a holder is there. Returns the spare on success. */
async function land(
  context: FileLockContext,
  spare: Spare,
  lockDir: string,
  keyDir: string,
): Promise<Spare | undefined> {
  const { fs, pool, staleness } = context;
  let current = spare;
  for (let attempt = 0; ; attempt++) {
    const marker = childPath(current.dir, current.markerName);
    try {
      // The marker must look fresh the moment it lands, or a contender could claim it.
      if (now() - current.touchedAt > Math.min(1000, staleness.leaseMs / 4)) {
        await fs.touch(marker, Date.now());
        current.touchedAt = now();
      }
      await fs.rename(current.dir, lockDir);
      return current;
    } catch (error) {
      if (isOccupied(error)) {
        pool.giveSpare(current);
        return undefined;
      }
      if (!isMissing(error) || attempt >= 2) {
        pool.forget(current);
        throw unavailable(`rename onto ${lockDir}`, error);
      }
      if (attempt === 0) {
        // First use of this key: its directory does not exist yet.
        await fs.mkdirp(keyDir).catch((e: unknown) => {
          throw unavailable(`mkdir ${keyDir}`, e);
        });
      } else {
        // Our spare was removed behind our back: build another.
        pool.forget(current);
        current = await pool.takeSpare();
      }
    }
  }
}

/**
 * One attempt to take the lock directory. Claims an abandoned holder's marker (exactly one
 * contender succeeds) and tries again; gives up after a few rounds of churn.
 */
export async function takeLockDir(
  context: FileLockContext,
  lockDir: string,
  keyDir: string,
): Promise<TakeResult> {
  for (let round = 0; round < 3; round++) {
    const landed = await land(context, await context.pool.takeSpare(), lockDir, keyDir);
    if (landed) {
      return { marker: childPath(lockDir, landed.markerName), touchedAt: landed.touchedAt };
    }
    const census = await censusOf(context, lockDir, '');
    if (census.live > 0) return { retryAtWall: census.retryAtWall };
    // Released meanwhile, or an abandoned holder was just claimed: the path is free now.
  }
  return { retryAtWall: undefined };
}

/**
 * Ownership-checked release: claims our marker (false if it is gone: not ours any more), then
 * removes the lock directory if it is still empty (it wakes waiters watching the key).
 */
export async function releaseLockDir(
  context: FileLockContext,
  lockDir: string,
  marker: string,
): Promise<boolean> {
  if (!(await claimMarker(context, marker))) return false;
  try {
    await context.fs.rmdir(lockDir);
  } catch {
    // Already replaced by the next holder (ENOTEMPTY) or removed: an empty lock directory is
    // a free lock either way, so the release has happened.
  }
  return true;
}
