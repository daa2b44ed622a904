import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BackendUnavailableError, type LockKind } from 'lockkit';
import type { LockTarget } from '../invocation.js';
import { importBeside } from './import-beside.js';
import type { Holder, InspectReport } from './inspect-report.js';

interface FileBackendModule {
  keyDirName(namespace: string, kind: LockKind, name: string): string;
  fencingCounterOf(names: readonly string[]): bigint | undefined;
  readonly hostTag: string;
}

/** The host tag `@lockkit/file` writes into marker names (`<pid>.<host tag>.<random>.<n>`). */

/**
 * Reads the lock directory as `@lockkit/file` lays it out (see its README): the markers name
 * the holder's pid and host. The last heartbeat is the mtime of the lock directory (`lock`,
 * `gate`: proper-lockfile refreshes it) for a mutex holder or writer, and of the marker itself
 * for a reader or permit.
 */
export async function inspectFile(
  options: Readonly<Record<string, unknown>>,
  name: string,
  target: LockTarget,
  lock: string,
): Promise<InspectReport> {
  const { keyDirName, fencingCounterOf, hostTag } = await importBeside<FileBackendModule>(
    'file',
    '@lockkit/file',
  );
  const directory = String(options['directory']);
  checkLockDirectory(directory);
  const namespace = typeof options['namespace'] === 'string' ? options['namespace'] : '';
  const leaseMs = typeof options['leaseMs'] === 'number' ? options['leaseMs'] : 30_000;
  const keyDirectory = join(directory, keyDirName(namespace, target.kind, name));
  const now = Date.now();
  const markerAt = (path: string, role: string, heartbeat = path): Holder | undefined =>
    describeMarker(path, heartbeat, role, now, leaseMs, hostTag);
  const holders: Holder[] = [];
  const notes: string[] = [];
  if (target.kind === 'mutex') {
    for (const marker of list(join(keyDirectory, 'lock'))) {
      const lockDir = join(keyDirectory, 'lock');
      const holder = markerAt(join(lockDir, marker), 'holder', lockDir);
      if (holder) holders.push(holder);
    }
  } else {
    const entries = list(keyDirectory);
    // Permit markers are `p.…` (one permit) or `p<n>.…` (n permits taken at once).
    const pattern = target.kind === 'semaphore' ? /^p(\d*)\./ : /^r\.()/;
    const role = target.kind === 'semaphore' ? 'permit' : 'reader';
    for (const entry of entries) {
      const match = pattern.exec(entry);
      if (!match) continue;
      const holder = markerAt(join(keyDirectory, entry), role);
      if (!holder) continue;
      const permits = match[1] ? Number(match[1]) : 1;
      holders.push(
        permits === 1
          ? holder
          : {
              ...holder,
              summary: `${permits} permits, ${holder.summary}`,
              details: { ...holder.details, permits },
            },
      );
    }
    if (target.kind !== 'semaphore') {
      for (const marker of list(join(keyDirectory, 'gate'))) {
        const gate = join(keyDirectory, 'gate');
        const writer = markerAt(join(gate, marker), 'writer', gate);
        if (!writer) continue;
        if (holders.length > 0) {
          notes.push('the writer holds the gate and gets the lock when the readers are done');
        }
        holders.push(writer);
      }
    }
  }
  if (holders.some((holder) => holder.details['stale'] === true)) {
    notes.push(
      `a stale holder (no heartbeat for ${leaseMs} ms) is taken over by the next acquirer`,
    );
  }
  const fence = lastFencingToken(keyDirectory, fencingCounterOf);
  return {
    backend: 'file',
    lock,
    canTell: true,
    holders,
    waiters: [],
    ...(fence === undefined ? {} : { lastFencingToken: fence }),
    notes: [...notes, 'waiters leave no trace in the directory, so they are not listed'],
  };
}

function describeMarker(
  path: string,
  heartbeat: string,
  role: string,
  now: number,
  leaseMs: number,
  thisHostTag: string,
): Holder | undefined {
  let modified: number;
  try {
    statSync(path); // still there?
    modified = statSync(heartbeat).mtimeMs;
  } catch {
    return undefined; // released between the listing and the stat
  }
  const marker = path.slice(path.lastIndexOf('/') + 1).replace(/^(r|p\d*)\./, '');
  const [pidText = '', hostTag = ''] = marker.split('.');
  const pid = Number(pidText);
  const local = hostTag === thisHostTag;
  const running = local ? isRunning(pid) : null;
  const ageMs = Math.max(0, now - modified);
  const stale = ageMs > leaseMs;
  const where = local
    ? `on this host (${running ? 'running' : 'not running'})`
    : `on another host (tag ${hostTag})`;
  return {
    role,
    summary: `pid ${pid} ${where}, heartbeat ${(ageMs / 1000).toFixed(1)} s ago${stale ? ' (stale)' : ''}`,
    details: { pid, hostTag, thisHost: local, running, heartbeatAgeMs: Math.round(ageMs), stale },
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The lock directory of the URL must exist: `lockkit run` creates it, so a missing one is a
 * wrong URL, not a free lock.
 */
function checkLockDirectory(directory: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(directory).isDirectory();
  } catch (error) {
    throw new BackendUnavailableError(
      isMissing(error)
        ? `Lock directory ${directory} does not exist (lockkit creates it on first use: is the URL right?)`
        : `Cannot read lock directory ${directory}`,
      { cause: error },
    );
  }
  if (!isDirectory) {
    throw new BackendUnavailableError(`Lock directory ${directory} is not a directory`);
  }
}

/** The entries of `directory`; none if it does not exist (that lock was never taken). */
function list(directory: string): string[] {
  try {
    return readdirSync(directory);
  } catch (error) {
    if (isMissing(error)) return [];
    throw new BackendUnavailableError(`Cannot read ${directory}`, { cause: error });
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The fencing counter, read as `@lockkit/file` reads it. */
function lastFencingToken(
  keyDirectory: string,
  fencingCounterOf: FileBackendModule['fencingCounterOf'],
): string | undefined {
  const last = fencingCounterOf(list(keyDirectory));
  return last === undefined ? undefined : String(last);
}
