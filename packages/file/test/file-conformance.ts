import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeLockProvider } from '@lockkit/conformance';
import { grantBehind } from '@lockkit/core/backend';
import { createFileLockProvider, type FileGrant, keyDirName } from '../src/index.js';
import { GOLDEN_KEYS } from './golden-keys.js';
import { TEST_LEASE_MS, TIME_SCALE, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('conformance');
// A lock directory that cannot be used: its parent is a regular file (ENOTDIR).
const blocker = temporaryDirectory('outage');
writeFileSync(join(blocker, 'file'), 'not a directory');
const unusable = join(blocker, 'file', 'locks');

/** The published suite against the file backend with `io` (one test file per mode, in parallel). */
export function describeFileConformance(io: 'sync' | 'async'): void {
  describeLockProvider({
    name: io === 'sync' ? 'file' : 'file (io: async)',
    createProvider: (options) =>
      createFileLockProvider({ ...options, directory, leaseMs: TEST_LEASE_MS, io }),
    leaseMs: TEST_LEASE_MS,
    faults: {
      // What a careless operator or a cleanup job does: delete the lock from disk.
      loseLock: (handle) => {
        const { grant } = grantBehind<FileGrant>(handle);
        rmSync(grant.lockDir ?? grant.marker, { recursive: true, force: true });
      },
      outage: {
        createUnreachableProvider: () =>
          createFileLockProvider({ directory: unusable, leaseMs: TEST_LEASE_MS, io }),
        address: unusable,
        // The lock directory is moved away and a regular file put in its place, as an
        // unmounted or replaced volume would leave it; restored afterwards.
        interrupt: async () => {
          const aside = `${directory}.aside`;
          renameSync(directory, aside);
          writeFileSync(directory, 'not a directory');
          return async () => {
            rmSync(directory, { force: true });
            renameSync(aside, directory);
          };
        },
      },
    },
    childProvider: {
      module: new URL('./fixtures/child-provider.ts', import.meta.url).href,
      env: { LOCKKIT_TEST_FILE_DIR: directory, LOCKKIT_TEST_LEASE_MS: String(TEST_LEASE_MS) },
    },
    goldenKeys: { map: (name) => keyDirName('', 'mutex', name), expected: GOLDEN_KEYS },
    timeScale: TIME_SCALE,
  });
}
