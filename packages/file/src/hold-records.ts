/**
 * Hold records: what `lock.inspect()` reports about a hold that the marker itself cannot say.
 * Each grant writes one small JSON file next to the key's other entries, `h.<marker name>`
 * (the marker's own name: `<pid>.<host>.…` for a lock directory's marker, `r.…`/`p<n>.…` for
 * a reader's or permits' marker), with the provider's owner label, the grant time and the
 * hold's fencing token.
 *
 * The record is written after the token is drawn (the marker must be visible before the
 * draw, and the draw is checked against the lock directory: gated-locks.ts `fenceUnder`), so
 * it is one extra file write per grant and one unlink per release. A record whose marker is
 * gone is garbage (marker names are never reused): the holder's release removes it, and so
 * does whoever claims an abandoned marker, or a `forceRelease()`. Holds of lockkit versions
 * that wrote no record are still holds (their markers are): owner, since and token unknown.
 *
 * @module
 */
import { basename } from 'node:path';
import type { FileOps } from './file-system.js';
import { isMissing, unavailable } from './file-system.js';
import { childPath } from './lock-paths.js';

/** Prefix of a hold record's name in a key directory. */
export const RECORD_PREFIX = 'h.';

/** What a hold record says. */
export interface HoldRecord {
  readonly owner: string | undefined;
  readonly since: number | undefined;
  readonly fencingToken: bigint | undefined;
}

/** The record path of the marker `markerName` in the key directory `keyDir`. */
export function recordPath(keyDir: string, markerName: string): string {
  return childPath(keyDir, RECORD_PREFIX + markerName);
}

/** The record path of a grant's marker (`lockDir` for a mutex's or writer's marker). */
export function recordOfMarker(marker: string, lockDir: string | undefined): string {
  const keyDir = lockDir === undefined ? parentOf(marker) : parentOf(lockDir);
  return recordPath(keyDir, basename(marker));
}

function parentOf(path: string): string {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return path.slice(0, cut);
}

/** Writes a grant's record. */
export async function writeRecord(
  fs: FileOps,
  path: string,
  owner: string | undefined,
  fencingToken: bigint,
): Promise<void> {
  const text = JSON.stringify({ owner, since: Date.now(), token: String(fencingToken) });
  try {
    await fs.writeFile(path, text);
  } catch (error) {
    throw unavailable(`write ${path}`, error);
  }
}

/**
 * Writes the record of a fresh grant and resolves its path; if that fails, gives the hold
 * back (`undo`) and rejects.
 */
export async function recordGrant(
  fs: FileOps,
  granted: {
    readonly marker: string;
    readonly lockDir: string | undefined;
    readonly fencingToken: bigint;
  },
  owner: string | undefined,
  undo: () => Promise<unknown>,
): Promise<string> {
  const path = recordOfMarker(granted.marker, granted.lockDir);
  try {
    await writeRecord(fs, path, owner, granted.fencingToken);
  } catch (error) {
    await undo().catch(() => false);
    throw error;
  }
  return path;
}

/** Removes a record (nothing if it is gone already). */
export async function removeRecord(fs: FileOps, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch (error) {
    if (!isMissing(error)) throw unavailable(`unlink ${path}`, error);
  }
}

const unknown: HoldRecord = { owner: undefined, since: undefined, fencingToken: undefined };

/** Reads a record; unknown fields (or a missing, foreign or torn record) read as undefined. */
export async function readRecord(fs: FileOps, path: string): Promise<HoldRecord> {
  let text: string;
  try {
    text = await fs.readFile(path);
  } catch (error) {
    if (isMissing(error)) return unknown;
    throw unavailable(`read ${path}`, error);
  }
  let record: { owner?: unknown; since?: unknown; token?: unknown };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    return unknown; // being written (a reader may see it empty) or not ours
  }
  if (typeof record !== 'object' || record === null) return unknown;
  return {
    owner: typeof record.owner === 'string' ? record.owner : undefined,
    since: typeof record.since === 'number' ? record.since : undefined,
    fencingToken:
      typeof record.token === 'string' && /^\d{1,20}$/.test(record.token)
        ? BigInt(record.token)
        : undefined,
  };
}
