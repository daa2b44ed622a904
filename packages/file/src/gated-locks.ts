/**
 * One attempt per primitive. The mutex is a lock directory (`lock`). The RW lock and the
 * semaphore share one shape: a gate (a lock directory, `gate`) plus one heartbeated marker per
 * holder directly in the key directory (`r.…` for readers, `p.…` for permits):
 *
 * - reader: unless a waiting writer left an intent marker (`w.…`, writer-intent.ts), take the
 *   gate, add a marker, release the gate (a waiting writer holds the gate or announces its
 *   intent, so new readers queue behind it: writer preference);
 * - writer: take the gate and keep it; the write lock is held once no live reader marker is
 *   left (markers past their lease are claimed on the way);
 * - permit: count live markers (without the gate, so a full semaphore costs waiters no
 *   writes); if there is room, take the gate, count again, add a marker, release the gate;
 * - several permits (`p<n>.` markers, weighing n): like a writer, take the gate and keep it
 *   while waiting, until the permits of the live markers plus ours fit; no one passes it.
 *
 * Lock directories (`lock`, `gate`) are proper-lockfile locks (lock-dirs.ts). The fencing
 * counter is advanced only while holding the key's lock directory.
 *
 * @module
 */
import { type LockRequest, now } from '@lockkit/core/backend';
import type { FileLockContext } from './file-lock-context.js';
import { isMissing, unavailable } from './file-system.js';
import { censusOf, claimMarker } from './holder-markers.js';
import type { Holding } from './lock-dirs.js';
import {
  childPath,
  freshMarkerName,
  type KeyPaths,
  PERMIT_PREFIX,
  permitPrefix,
  permitWeight,
  READER_PREFIX,
  WRITER_PREFIX,
} from './lock-paths.js';

/** A granted lock, before core turns it into a handle. */
export interface GrantParts {
  /** Our marker: its presence is the ownership. */
  readonly marker: string;
  /** The lock directory to tidy at release (mutex, writer); undefined for reader/permit markers. */
  readonly lockDir: string | undefined;
  readonly fencingToken: bigint;
  /** performance.now() just before the lease was last refreshed (the lease start). */
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
 * Next token while holding the lock directory `lock`. A contender may have taken the lock over
 * at any moment since it landed and drawn a token first: after a stall past the lease, or at
 * once if its wall clock disagrees with ours by more than the lease (our fresh mtime looks
 * stale to it). So every draw is followed by an ownership check: a takeover before the check
 * fails it; a takeover after it draws after us, a higher token. A lock whose lease has run
 * out is not used either.
 */
async function fenceUnder(
  context: FileLockContext,
  paths: KeyPaths,
  lock: Holding,
): Promise<{ fencingToken: bigint; touchedAt: number } | undefined> {
  const fencingToken = await context.counters.next(paths.keyDir);
  const { dirs } = context;
  if (!(await dirs.confirm(lock))) return undefined;
  if (now() >= dirs.validUntil(lock)) return undefined;
  return { fencingToken, touchedAt: lock.lastBeat };
}

/**
 * One attempt of `request`'s kind. `pendingGate`: the gate a writer or weighted request kept
 * from its previous attempt; `mayKeep`: keep it again if the attempt must wait.
 */
export function attemptKind(
  context: FileLockContext,
  paths: KeyPaths,
  request: LockRequest,
  pendingGate: string | undefined,
  mayKeep: boolean,
): Promise<Attempt> {
  switch (request.kind) {
    case 'mutex':
      return tryMutex(context, paths);
    case 'read':
      return tryReader(context, paths);
    case 'write':
      return tryWriter(context, paths, pendingGate, mayKeep);
    case 'semaphore': {
      const { maxCount, permits = 1 } = request;
      return trySemaphore(context, paths, maxCount, permits, pendingGate, mayKeep);
    }
  }
}

/** Mutex: take `lock`. */
export async function tryMutex(context: FileLockContext, paths: KeyPaths): Promise<Attempt> {
  const taken = await context.dirs.take(paths.lockDir);
  if (!taken.holding) return busy(taken.retryAtWall);
  const lock = taken.holding;
  try {
    const fenced = await fenceUnder(context, paths, lock);
    if (fenced) return { granted: { marker: lock.marker, lockDir: paths.lockDir, ...fenced } };
  } catch (error) {
    await context.dirs.release(lock).catch(() => false);
    throw error;
  }
  await context.dirs.release(lock).catch(() => false);
  return busy(undefined);
}

/** Adds a fresh holder marker (`prefix` + unique name) to the key directory. */
export async function addMember(
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
  gate: Holding,
  prefix: string,
): Promise<Attempt> {
  const member = await addMember(context, paths.keyDir, prefix);
  try {
    const fenced = await fenceUnder(context, paths, gate);
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

/** Reader: pass the gate, unless a writer waits for it (a live `w.` intent marker). */
export async function tryReader(context: FileLockContext, paths: KeyPaths): Promise<Attempt> {
  const writers = await censusOf(context, paths.keyDir, WRITER_PREFIX);
  if (writers.live > 0) return busy(writers.retryAtWall);
  const gate = await context.dirs.take(paths.lockDir);
  if (!gate.holding) return busy(gate.retryAtWall);
  try {
    return await joinUnderGate(context, paths, gate.holding, READER_PREFIX);
  } finally {
    await context.dirs.release(gate.holding).catch(() => false);
  }
}

/** Permit(s) of a semaphore with `maxCount` permits. */
export async function trySemaphore(
  context: FileLockContext,
  paths: KeyPaths,
  maxCount: number,
  permits: number,
  pendingGate: string | undefined,
  mayKeep: boolean,
): Promise<Attempt> {
  if (permits > 1) return tryWeighted(context, paths, maxCount, permits, pendingGate, mayKeep);
  const before = await censusOf(context, paths.keyDir, permitWeight, maxCount);
  if (before.live >= maxCount) return busy(before.retryAtWall);
  const gate = await context.dirs.take(paths.lockDir);
  if (!gate.holding) return busy(gate.retryAtWall);
  try {
    const under = await censusOf(context, paths.keyDir, permitWeight, maxCount);
    if (under.live >= maxCount) return busy(under.retryAtWall);
    return await joinUnderGate(context, paths, gate.holding, PERMIT_PREFIX);
  } finally {
    await context.dirs.release(gate.holding).catch(() => false);
  }
}

/**
 * Several permits at once: like a writer, hold the gate (kept between attempts while waiting,
 * when `mayKeep`) until enough permits are free, so no later request passes a waiting one.
 */
async function tryWeighted(
  context: FileLockContext,
  paths: KeyPaths,
  maxCount: number,
  permits: number,
  pendingGate: string | undefined,
  mayKeep: boolean,
): Promise<Attempt> {
  const gate = await holdGate(context, paths, pendingGate);
  if (!gate.holding) return busy(gate.retryAtWall);
  let keep = false;
  try {
    const taken = await censusOf(context, paths.keyDir, permitWeight, maxCount - permits + 1);
    if (taken.live + permits > maxCount) {
      keep = mayKeep;
      return {
        retryAtWall: taken.retryAtWall,
        pendingGate: keep ? gate.holding.marker : undefined,
      };
    }
    return await joinUnderGate(context, paths, gate.holding, permitPrefix(permits));
  } finally {
    if (!keep) await context.dirs.release(gate.holding).catch(() => false);
  }
}

/** The gate: the one kept from the previous attempt if it is still ours, or take it. */
async function holdGate(
  context: FileLockContext,
  paths: KeyPaths,
  pendingGate: string | undefined,
): Promise<{ holding?: Holding | undefined; retryAtWall?: number | undefined }> {
  const { dirs } = context;
  const kept = pendingGate === undefined ? undefined : dirs.holding(pendingGate);
  if (kept && (await dirs.confirm(kept))) return { holding: kept };
  if (kept) await dirs.release(kept).catch(() => false); // lost while we waited
  return dirs.take(paths.lockDir);
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
  const { dirs } = context;
  const taken = await holdGate(context, paths, pendingGate);
  if (!taken.holding) return busy(taken.retryAtWall);
  const gate = taken.holding;
  let keep = false;
  try {
    const readers = await censusOf(context, paths.keyDir, READER_PREFIX);
    if (readers.live > 0) {
      keep = mayKeep;
      return { retryAtWall: readers.retryAtWall, pendingGate: keep ? gate.marker : undefined };
    }
    const fenced = await fenceUnder(context, paths, gate);
    if (!fenced) return busy(undefined);
    keep = true;
    return { granted: { marker: gate.marker, lockDir: paths.lockDir, ...fenced } };
  } finally {
    if (!keep) await dirs.release(gate).catch(() => false);
  }
}
