/**
 * One attempt per primitive. The mutex is a lock directory (`lock`). The RW lock and the
 * semaphore share one shape: a gate (a lock directory, `gate`) plus one heartbeated marker per
 * holder directly in the key directory (`r.…` for readers, `p.…` for permits):
 *
 * - reader: take the gate, add a marker, release the gate (a waiting writer holds the gate,
 *   so new readers queue behind it: writer preference);
 * - writer: take the gate and keep it; the write lock is held once no live reader marker is
 *   left (markers past their lease are claimed on the way);
 * - permit: count live markers (without the gate, so a full semaphore costs waiters no
 *   writes); if there is room, take the gate, count again, add a marker, release the gate.
 *
 * The fencing counter is advanced only while holding the key's lock directory.
 *
 * @module
 */
import { now } from '@lockkit/core';
import { isMissing, unavailable } from './file-system.js';
import {
  censusOf,
  claimMarker,
  type FileLockContext,
  releaseLockDir,
  takeLockDir,
  touchMarker,
} from './lock-directory.js';
import {
  childPath,
  freshMarkerName,
  type KeyPaths,
  PERMIT_PREFIX,
  READER_PREFIX,
} from './lock-paths.js';

/** A granted lock, before core turns it into a handle. */
export interface GrantParts {
  /** Our marker: its mtime is the heartbeat, its presence the ownership. */
  readonly marker: string;
  /** The lock directory to tidy at release (mutex, writer); undefined for reader/permit markers. */
  readonly lockDir: string | undefined;
  readonly fencingToken: bigint;
  /** performance.now() just before the marker's mtime was last set (the lease start). */
  readonly touchedAt: number;
}

/** The outcome of one attempt. */
export type Attempt =
  | { readonly granted: GrantParts; readonly pendingGate?: undefined }
  | {
      readonly granted?: undefined;
      /** Wall-clock ms at which the blocking holder turns stale (when known). */
      readonly retryAtWall: number | undefined;
      /** Writer only: the gate it keeps while readers drain. */
      readonly pendingGate?: string | undefined;
    };

const busy = (retryAtWall: number | undefined): Attempt => ({ retryAtWall });

/**
 * Next token while holding the lock directory whose marker `lockMarker` was last touched at
 * `touchedAt`. If the marker may have aged enough for a contender to call it stale (this
 * process stalled), someone may have taken over and drawn the same token: then the marker
 * must still be ours (checked by refreshing it), or the token is not used.
 */
async function fenceUnder(
  context: FileLockContext,
  paths: KeyPaths,
  lockMarker: string,
  touchedAt: number,
): Promise<{ fencingToken: bigint; touchedAt: number } | undefined> {
  const fencingToken = await context.counters.next(paths.fenceFile, paths.keyDir);
  if (now() - touchedAt <= context.staleness.leaseMs / 4) return { fencingToken, touchedAt };
  const refreshedAt = now();
  if (!(await touchMarker(context, lockMarker))) return undefined;
  return { fencingToken, touchedAt: refreshedAt };
}

/** Mutex: take `lock`. */
export async function tryMutex(context: FileLockContext, paths: KeyPaths): Promise<Attempt> {
  const taken = await takeLockDir(context, paths.lockDir, paths.keyDir);
  if (taken.marker === undefined) return busy(taken.retryAtWall);
  try {
    const fenced = await fenceUnder(context, paths, taken.marker, taken.touchedAt);
    if (!fenced) return busy(undefined);
    return { granted: { marker: taken.marker, lockDir: paths.lockDir, ...fenced } };
  } catch (error) {
    await releaseLockDir(context, paths.lockDir, taken.marker).catch(() => false);
    throw error;
  }
}

/** Adds a fresh holder marker (`prefix` + unique name) to the key directory. */
async function addMember(
  context: FileLockContext,
  keyDir: string,
  prefix: string,
): Promise<{ marker: string; touchedAt: number }> {
  const marker = childPath(keyDir, prefix + freshMarkerName());
  for (let attempt = 0; ; attempt++) {
    const bare = await context.pool.takeBare();
    try {
      const touchedAt = now();
      await context.fs.touch(bare, Date.now());
      await context.fs.rename(bare, marker);
      return { marker, touchedAt };
    } catch (error) {
      if (!isMissing(error) || attempt > 0) throw unavailable(`rename into ${keyDir}`, error);
      context.pool.forgetKept(); // the reused directory vanished (the tree was deleted)
    }
  }
}

/** Reader or permit: with the gate held, add our marker and take a token. */
async function joinUnderGate(
  context: FileLockContext,
  paths: KeyPaths,
  gate: { readonly marker: string; readonly touchedAt: number },
  prefix: string,
): Promise<Attempt> {
  const member = await addMember(context, paths.keyDir, prefix);
  try {
    const fenced = await fenceUnder(context, paths, gate.marker, gate.touchedAt);
    if (!fenced) {
      await claimMarker(context, member.marker);
      return busy(undefined);
    }
    return {
      granted: {
        marker: member.marker,
        lockDir: undefined,
        fencingToken: fenced.fencingToken,
        touchedAt: member.touchedAt,
      },
    };
  } catch (error) {
    await claimMarker(context, member.marker).catch(() => false);
    throw error;
  }
}

/** Reader: pass the gate. */
export async function tryReader(context: FileLockContext, paths: KeyPaths): Promise<Attempt> {
  const gate = await takeLockDir(context, paths.lockDir, paths.keyDir);
  if (gate.marker === undefined) return busy(gate.retryAtWall);
  try {
    return await joinUnderGate(context, paths, gate, READER_PREFIX);
  } finally {
    await releaseLockDir(context, paths.lockDir, gate.marker).catch(() => false);
  }
}

/** Permit of a semaphore with `maxCount` permits. */
export async function trySemaphore(
  context: FileLockContext,
  paths: KeyPaths,
  maxCount: number,
): Promise<Attempt> {
  const before = await censusOf(context, paths.keyDir, PERMIT_PREFIX, maxCount);
  if (before.live >= maxCount) return busy(before.retryAtWall);
  const gate = await takeLockDir(context, paths.lockDir, paths.keyDir);
  if (gate.marker === undefined) return busy(gate.retryAtWall);
  try {
    const under = await censusOf(context, paths.keyDir, PERMIT_PREFIX, maxCount);
    if (under.live >= maxCount) return busy(under.retryAtWall);
    return await joinUnderGate(context, paths, gate, PERMIT_PREFIX);
  } finally {
    await releaseLockDir(context, paths.lockDir, gate.marker).catch(() => false);
  }
}

/**
 * Writer: hold the gate (`pendingGate` from the previous attempt, or take it), and own the
 * lock once no live reader is left. While readers remain the gate is kept (when `mayKeep`)
 * and returned as `pendingGate`, so new readers stay out; otherwise it is released.
 */
export async function tryWriter(
  context: FileLockContext,
  paths: KeyPaths,
  pendingGate: string | undefined,
  mayKeep: boolean,
): Promise<Attempt> {
  let gate = pendingGate;
  let touchedAt = now();
  if (gate !== undefined && !(await touchMarker(context, gate))) gate = undefined;
  if (gate === undefined) {
    const taken = await takeLockDir(context, paths.lockDir, paths.keyDir);
    if (taken.marker === undefined) return busy(taken.retryAtWall);
    gate = taken.marker;
    touchedAt = taken.touchedAt;
  }
  let keep = false;
  try {
    const readers = await censusOf(context, paths.keyDir, READER_PREFIX);
    if (readers.live > 0) {
      keep = mayKeep;
      return { retryAtWall: readers.retryAtWall, pendingGate: keep ? gate : undefined };
    }
    const fenced = await fenceUnder(context, paths, gate, touchedAt);
    if (!fenced) return busy(undefined);
    keep = true;
    return { granted: { marker: gate, lockDir: paths.lockDir, ...fenced } };
  } finally {
    if (!keep) await releaseLockDir(context, paths.lockDir, gate).catch(() => false);
  }
}
