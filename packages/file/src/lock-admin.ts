/**
 * The operator's reading and break of a lock (`lock.inspect()`, `lock.forceRelease()`), from
 * the key directory's layout (lock-paths.ts):
 *
 * - mutex: the marker in `lock/`, live while `lock/`'s mtime (its heartbeat) is fresh;
 * - RW lock: each live `r.` marker is a reader; the marker in `gate/` is the writer once it
 *   has its hold record (a writer keeping the gate while readers drain has none yet: it
 *   waits); waiting writers are the live `w.` intent markers;
 * - semaphore: each live `p.`/`p<n>.` marker holds 1/n permits (the gate is never a hold).
 *
 * Owner, since and token come from the hold records (hold-records.ts). A break claims each
 * holder's marker (`rename` into our spares: exactly what a takeover of an abandoned holder
 * does), so each holder finds it gone at its next heartbeat and its release answers false;
 * the fencing counter is not touched.
 *
 * @module
 */
import type { LockKind } from '@lockkit/core';
import type { BackendLockState, LockHolder } from '@lockkit/core/backend';
import type { FileLockContext } from './file-lock-context.js';
import { isMissing, unavailable } from './file-system.js';
import { RECORD_PREFIX, readRecord, recordPath, removeRecord } from './hold-records.js';
import { claimMarker } from './holder-markers.js';
import {
  childPath,
  type KeyPaths,
  permitWeight,
  READER_PREFIX,
  WRITER_PREFIX,
} from './lock-paths.js';

/** One live hold found on disk. */
interface FoundHold {
  readonly holder: LockHolder;
  readonly marker: string;
  /** The lock directory to tidy after a break (mutex, writer). */
  readonly lockDir: string | undefined;
}

/** The live holds of a key, and how many writers wait (RW only). */
async function readHolds(
  context: FileLockContext,
  paths: KeyPaths,
  kind: LockKind,
): Promise<{ holds: FoundHold[]; waiting: number | undefined; names: string[] }> {
  const names = await list(context, paths.keyDir);
  const holds: FoundHold[] = [];
  if (kind === 'mutex') {
    holds.push(...(await lockDirHolds(context, paths, 'mutex', false)));
    return { holds, waiting: undefined, names };
  }
  const readers = kind === 'read' || kind === 'write';
  let waiting = readers ? 0 : undefined;
  for (const name of names) {
    const permits = readers ? (name.startsWith(READER_PREFIX) ? 1 : undefined) : permitWeight(name);
    const isIntent = readers && name.startsWith(WRITER_PREFIX);
    if (permits === undefined && !isIntent) continue;
    const marker = childPath(paths.keyDir, name);
    const validUntil = await liveUntil(context, marker);
    if (validUntil === undefined) continue;
    if (isIntent) {
      waiting = (waiting ?? 0) + 1;
      continue;
    }
    const holderKind = readers ? 'read' : 'semaphore';
    const holder = await holderOf(context, paths.keyDir, name, holderKind, permits!, validUntil);
    holds.push({ holder, marker, lockDir: undefined });
  }
  if (readers) {
    holds.push(...(await lockDirHolds(context, paths, 'write', holds.length > 0)));
  }
  return { holds, waiting, names };
}

/**
 * The live holder of a key's lock directory (`lock` or `gate`). A writer's gate counts only
 * with its hold record, or (an older client's writer) while no reader is left.
 */
async function lockDirHolds(
  context: FileLockContext,
  paths: KeyPaths,
  kind: 'mutex' | 'write',
  readersLive: boolean,
): Promise<FoundHold[]> {
  const inside = await list(context, paths.lockDir);
  if (inside.length === 0) return [];
  const validUntil = await liveUntil(context, paths.lockDir);
  if (validUntil === undefined) return [];
  const holds: FoundHold[] = [];
  for (const name of inside) {
    const holder = await holderOf(context, paths.keyDir, name, kind, 1, validUntil);
    if (kind === 'write' && holder.fencingToken === undefined && readersLive) continue;
    holds.push({ holder, marker: childPath(paths.lockDir, name), lockDir: paths.lockDir });
  }
  return holds;
}

async function holderOf(
  context: FileLockContext,
  keyDir: string,
  markerName: string,
  kind: LockHolder['kind'],
  permits: number,
  validUntil: number,
): Promise<LockHolder> {
  const record = await readRecord(context.fs, recordPath(keyDir, markerName));
  return Object.freeze({ kind, permits, validUntil, ...record });
}

/** The wall-clock end of a heartbeat's lease, or undefined if it is gone or stale. */
async function liveUntil(context: FileLockContext, path: string): Promise<number | undefined> {
  let mtimeMs: number;
  try {
    mtimeMs = await context.fs.mtimeMs(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw unavailable(`stat ${path}`, error);
  }
  return context.staleness.isStale(mtimeMs) ? undefined : context.staleness.staleAt(mtimeMs);
}

async function list(context: FileLockContext, dir: string): Promise<string[]> {
  try {
    return await context.fs.readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw unavailable(`readdir ${dir}`, error);
  }
}

/** `lock.inspect()`: the live holds of the key (`kind` is `write` for an RW lock). */
export async function inspectKey(
  context: FileLockContext,
  paths: KeyPaths,
  kind: LockKind,
): Promise<BackendLockState> {
  const { holds, waiting } = await readHolds(context, paths, kind);
  return { holders: holds.map((hold) => hold.holder), waiting };
}

/** `lock.forceRelease()`: claims every live holder's marker; resolves how many it claimed. */
export async function breakKey(
  context: FileLockContext,
  paths: KeyPaths,
  kind: LockKind,
): Promise<number> {
  const { holds, names } = await readHolds(context, paths, kind);
  let broken = 0;
  for (const { marker, lockDir } of holds) {
    if (!(await claimMarker(context, marker))) continue; // released meanwhile
    broken += 1;
    // The empty lock directory is a free lock; removing it wakes the waiters watching the
    // key (a successor that landed meanwhile keeps it: rmdir spares a non-empty directory).
    if (lockDir !== undefined) await context.fs.rmdir(lockDir).catch(() => undefined);
  }
  await removeOrphans(context, paths, names);
  return broken;
}

/** Removes the records whose marker is gone (released, claimed, or left by a crash). */
async function removeOrphans(
  context: FileLockContext,
  paths: KeyPaths,
  names: readonly string[],
): Promise<void> {
  for (const name of names) {
    if (!name.startsWith(RECORD_PREFIX)) continue;
    const markerName = name.slice(RECORD_PREFIX.length);
    const inKeyDir = permitWeight(markerName) !== undefined || markerName.startsWith(READER_PREFIX);
    const marker = childPath(inKeyDir ? paths.keyDir : paths.lockDir, markerName);
    const exists = await context.fs.mtimeMs(marker).then(
      () => true,
      (error: unknown) => !isMissing(error),
    );
    if (!exists) await removeRecord(context.fs, childPath(paths.keyDir, name));
  }
}
