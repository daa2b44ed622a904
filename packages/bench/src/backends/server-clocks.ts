import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackendId } from './backend-ids.js';

/**
 * Server wall clocks that `pnpm chaos --faults clock` can jump: the servers start under
 * Debian's libfaketime with a timestamp file per backend, which libfaketime re-reads on every
 * clock call (`FAKETIME_NO_CACHE`), so writing `+60` into it jumps every server of that backend
 * at once. Their monotonic clocks are left alone (`FAKETIME_DONT_FAKE_MONOTONIC`).
 */
export type ServerClock =
  | { readonly file: string; readonly skipped?: undefined }
  | { readonly file?: undefined; readonly skipped: string };

const libraryDirectories = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib'];

function findLibrary(name: string): string | undefined {
  return libraryDirectories.map((dir) => join(dir, name)).find((path) => existsSync(path));
}

/** Why a backend's server cannot have its clock jumped, where that is so regardless of setup. */
const cannot: Readonly<Partial<Record<BackendId, string>>> = {
  // Checked: under libfaketime +3600 etcd 3.4's log stamps stay at the real time.
  etcd: 'etcd is Go: its runtime reads the wall clock through the vDSO, never through libc, so libfaketime cannot move it',
  file: 'the file backend has no server',
  'redis-cluster': 'not wired for the Cluster topology',
  'redis-cluster-ack': 'not wired for the Cluster topology',
  'redis-sentinel': 'not wired for the Sentinel topology',
  'redis-sentinel-ack': 'not wired for the Sentinel topology',
};

/** Per backend: its clock file and the environment its servers start with, or why not. */
export interface ServerClocks {
  of(backend: BackendId): ServerClock;
  /** The environment to start `backend`'s servers with (undefined: start them plainly). */
  environmentOf(backend: BackendId): Readonly<Record<string, string>> | undefined;
}

export function serverClocks(wanted: boolean): ServerClocks {
  const libfaketime = findLibrary('faketime/libfaketime.so.1');
  // Debian's redis-server is linked with jemalloc, which cannot start under libfaketime
  // ("Unexpected recursive calls to clock_gettime()"): interpose glibc's malloc first.
  const glibcMalloc = findLibrary('libc_malloc_debug.so.0');
  if (!wanted || !libfaketime) {
    const skipped = wanted ? 'libfaketime is not installed (apt-get install faketime)' : 'off';
    return { of: () => ({ skipped }), environmentOf: () => undefined };
  }
  const directory = mkdtempSync(join(tmpdir(), 'lockkit-chaos-server-clock-'));
  // PostgreSQL runs as its own user when we are root: it must read the file.
  chmodSync(directory, 0o755);
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  const reason = (backend: BackendId): string | undefined => {
    if (cannot[backend]) return cannot[backend];
    const redis = backend === 'redis' || backend === 'redlock';
    if (redis && !glibcMalloc) return "glibc's libc_malloc_debug.so.0 is missing (for jemalloc)";
    return undefined;
  };
  const fileOf = (backend: BackendId): string => join(directory, backend);
  return {
    of: (backend) => {
      const skipped = reason(backend);
      return skipped === undefined ? { file: fileOf(backend) } : { skipped };
    },
    environmentOf: (backend) => {
      if (reason(backend) !== undefined) return undefined;
      const file = fileOf(backend);
      writeFileSync(file, '+0', { mode: 0o644 });
      const preload =
        backend === 'redis' || backend === 'redlock'
          ? `${glibcMalloc} ${libfaketime}`
          : libfaketime;
      return {
        LD_PRELOAD: preload,
        FAKETIME_TIMESTAMP_FILE: file,
        FAKETIME_NO_CACHE: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      };
    },
  };
}
