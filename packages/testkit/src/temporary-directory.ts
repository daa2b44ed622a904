import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { trackDirectory, untrackDirectory } from './cleanup-registry.js';

/** Prefix of every temporary directory the test kit creates under `os.tmpdir()`. */
export const temporaryDirectoryPrefix = 'lockkit-testkit-';

/** Creates `os.tmpdir()/lockkit-testkit-<label>-XXXXXX`, removed when this process exits. */
export async function createTemporaryDirectory(label: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), `${temporaryDirectoryPrefix}${label}-`));
  trackDirectory(directory);
  return directory;
}

/** Removes a temporary directory created by {@link createTemporaryDirectory}. */
export async function removeTemporaryDirectory(directory: string): Promise<void> {
  if (!basename(directory).startsWith(temporaryDirectoryPrefix)) {
    throw new Error(`Refusing to remove ${directory}: not a test kit temporary directory`);
  }
  await rm(directory, { recursive: true, force: true, maxRetries: 3 });
  untrackDirectory(directory);
}
