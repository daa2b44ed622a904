import { rmSync } from 'node:fs';
import { describeLockProvider } from '@lockkit/conformance';
import { grantBehind } from '@lockkit/core';
import { createFileLockProvider, type FileGrant, keyDirName } from '../src/index.js';
import { GOLDEN_KEYS } from './golden-keys.js';
import { TEST_LEASE_MS, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('conformance');

for (const io of ['sync', 'async'] as const) {
  describeLockProvider({
    name: io === 'sync' ? 'file' : 'file (io: async)',
    createProvider: () => createFileLockProvider({ directory, leaseMs: TEST_LEASE_MS, io }),
    faults: {
      // What a careless operator or a cleanup job does: delete the lock from disk.
      loseLock: (handle) => {
        const { grant } = grantBehind<FileGrant>(handle);
        rmSync(grant.lockDir ?? grant.marker, { recursive: true, force: true });
      },
    },
    childProvider: {
      module: new URL('./fixtures/child-provider.ts', import.meta.url).href,
      env: { LOCKKIT_TEST_FILE_DIR: directory, LOCKKIT_TEST_LEASE_MS: String(TEST_LEASE_MS) },
    },
    goldenKeys: { map: (name) => keyDirName('', 'mutex', name), expected: GOLDEN_KEYS },
    timeScale: 1,
  });
}
