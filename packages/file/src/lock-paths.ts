/**
 * Where things live inside the lock directory. Every lock name maps to ONE key directory
 * (core's versioned `readableKey`, folded to lower case so case-insensitive file systems
 * cannot merge two names; the hash of the original name keeps `A` and `a` apart):
 *
 * ```
 * <directory>/
 *   .spares/                      prepared directories, renamed into place to take a lock
 *   mutex.<readable>.<hash>/      lock/<marker>/  fence.<n>
 *   rw.<readable>.<hash>/         gate/<marker>/  fence.<n>  r.<marker>/ …  (one per reader)
 *                                 w.<marker>/ …  (one per writer waiting for the gate)
 *   semaphore.<readable>.<hash>/  gate/<marker>/  fence.<n>  p.<marker>/ …  (one per permit)
 * ```
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sep } from 'node:path';
import type { LockKind } from '@lockkit/core';
import { base32, keyFamily, readableKey } from '@lockkit/core/backend';

/** Longest key directory name (far below the 255-byte limit of common file systems). */
export const KEY_MAX_LENGTH = 100;

/** The key directory name of (namespace, kind family, name). Golden-tested. */
export function keyDirName(namespace: string, kind: LockKind, name: string): string {
  return readableKey(namespace, kind, name, { lowercase: true, maxLength: KEY_MAX_LENGTH });
}

/** Name of the directory holding spare directories. */
export const SPARES_DIR = '.spares';
/** The mutex's lock directory inside its key directory. */
export const LOCK_DIR = 'lock';
/** The RW lock's and semaphore's gate (a lock directory) inside the key directory. */
export const GATE_DIR = 'gate';
/** The fencing counter inside the key directory: a file named `fence.<n>`. */
export const FENCE_FILE = 'fence';
/** Prefix of a reader's marker in an RW key directory. */
export const READER_PREFIX = 'r.';
/** Prefix of a waiting writer's intent marker in an RW key directory (writer-intent.ts). */
export const WRITER_PREFIX = 'w.';
/** Prefix of a permit holder's marker in a semaphore key directory. */
export const PERMIT_PREFIX = 'p.';

/** Marker prefix of a holder of `permits` permits: `p.` for one, `p<n>.` for more. */
export function permitPrefix(permits: number): string {
  return permits > 1 ? `p${permits}.` : PERMIT_PREFIX;
}

/** The permits a semaphore marker name stands for, or undefined if it is not one. */
export function permitWeight(name: string): number | undefined {
  const match = /^p([1-9]\d{0,9})?\./.exec(name);
  if (!match) return undefined;
  return match[1] === undefined ? 1 : Number(match[1]);
}

/** This host's tag in marker names (markers of another host cannot be probed by pid). */
export const hostTag: string = base32(createHash('sha256').update(hostname()).digest()).slice(0, 6);

// 80 random bits per process, then a counter: unique across processes and hosts without a
// random draw per name.
const processTag = base32(randomBytes(10));
let sequence = 0;

/**
 * A fresh, never-reused marker name: `<pid>.<host>.<process random>.<counter>`. The pid and a
 * tag of the host name tell a human who holds a lock, and let a provider sweep the spares of
 * dead processes on its own host.
 */
export function freshMarkerName(): string {
  sequence += 1;
  return `${process.pid}.${hostTag}.${processTag}.${sequence.toString(36)}`;
}

/** The pid in a marker name if it was made on this host, else undefined. */
export function localPidOf(markerName: string): number | undefined {
  const [pid, tag] = markerName.split('.');
  if (tag !== hostTag || pid === undefined || !/^\d+$/.test(pid)) return undefined;
  return Number(pid);
}

/** The paths of one key. */
export interface KeyPaths {
  /** `<directory>/<key>` */
  readonly keyDir: string;
  /** The lock directory (`lock` for a mutex, `gate` otherwise). */
  readonly lockDir: string;
}

/** `dir` + separator + `name` (paths here are already absolute and normal: no `join` cost). */
export function childPath(dir: string, name: string): string {
  return dir + sep + name;
}

/** The paths for a request. */
export function keyPaths(
  directory: string,
  namespace: string,
  kind: LockKind,
  name: string,
): KeyPaths {
  const family = keyFamily(kind);
  const keyDir = childPath(directory, keyDirName(namespace, kind, name));
  return {
    keyDir,
    lockDir: childPath(keyDir, family === 'mutex' ? LOCK_DIR : GATE_DIR),
  };
}
