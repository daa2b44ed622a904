/**
 * The lock directories are proper-lockfile locks: its heartbeat refreshes them, its
 * compromise detection reaches the handle's signal, and its traps stay closed.
 */
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { type LockHandle, LockLostError } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import lockfile from 'proper-lockfile';
import { describe, expect, it } from 'vitest';
import type { FileGrant } from '../src/index.js';
import {
  failOnBackgroundCrash,
  providerFactory,
  ms as scaled,
  TEST_LEASE_MS,
  temporaryDirectory,
  waitUntil,
} from './support.js';

const directory = temporaryDirectory('proper-lockfile');
const provider = providerFactory(directory);
/** proper-lockfile's heartbeat interval for TEST_LEASE_MS (its floor is 1000 ms). */
const updateMs = Math.max(1000, Math.floor(TEST_LEASE_MS / 3));

const lockDirOf = (handle: LockHandle): string => grantBehind<FileGrant>(handle).grant.lockDir!;
const mtimeOf = (path: string): number => statSync(path).mtimeMs;

// Background work must report through the signal, never as a crash.
failOnBackgroundCrash();

describe('lock directories are proper-lockfile locks', () => {
  it("proper-lockfile's check() sees a held lock, and release frees it", async () => {
    const handle = await provider().createLock('checked').acquire();
    const lockDir = lockDirOf(handle);
    const check = (): Promise<boolean> =>
      lockfile.check(lockDir, { lockfilePath: lockDir, realpath: false, stale: TEST_LEASE_MS });
    expect(await check()).toBe(true);
    expect(await handle.release()).toBe(true);
    expect(await check()).toBe(false);
  });

  it("the lock directory's mtime is refreshed by proper-lockfile's heartbeat while held", async () => {
    const handle = await provider().createLock('heartbeat').acquire();
    const lockDir = lockDirOf(handle);
    const first = mtimeOf(lockDir);
    await waitUntil(() => mtimeOf(lockDir) > first, scaled(updateMs + 1000), 'a heartbeat');
    expect(handle.signal.aborted).toBe(false);
    expect(await handle.release()).toBe(true);
  });

  it('a lock directory whose mtime someone else changed is reported lost on the signal, not thrown', async () => {
    const handle = await provider().createLock('replaced').acquire();
    const lockDir = lockDirOf(handle);
    // Another process refreshed the directory: proper-lockfile's next heartbeat sees an mtime
    // that is not its own and reports the lock compromised. The marker is still in place, so
    // nothing but proper-lockfile's detection can notice.
    const future = (Date.now() + 60_000) / 1000;
    utimesSync(lockDir, future, future);
    const reason = await new Promise<unknown>((resolve) => {
      if (handle.signal.aborted) resolve(handle.signal.reason);
      handle.signal.addEventListener('abort', () => resolve(handle.signal.reason), { once: true });
    });
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(String((reason as Error).message)).toContain('compromised');
    expect(await handle.release()).toBe(false); // lost: the caller learns it did not hold it
    const next = await provider().createLock('replaced').tryAcquire();
    expect(next).not.toBeNull(); // our marker was still there: the release freed the lock
    await next?.release();
  });

  it('a lock held with autoExtend: false is never refreshed (the heartbeat is withheld)', async () => {
    const fixed = providerFactory(directory, { autoExtend: false })();
    const handle = await fixed.createLock('fixed').acquire();
    const lockDir = lockDirOf(handle);
    const first = mtimeOf(lockDir);
    await new Promise<void>((resolve) =>
      handle.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    expect(mtimeOf(lockDir)).toBe(first);
    expect(await handle.release()).toBe(false);
  });

  it('two acquisitions of one key in one process keep separate proper-lockfile entries', async () => {
    const [p1, p2] = [provider(), provider()];
    const first = await p1.createLock('table').acquire();
    const lockDir = lockDirOf(first);
    const waiting = p2.createLock('table').acquire({ timeout: 5000 });
    expect(await first.release()).toBe(true);
    const second = await waiting;
    // The first release did not stop the second holder's heartbeat.
    const before = mtimeOf(lockDir);
    await waitUntil(() => mtimeOf(lockDir) > before, scaled(updateMs + 1000), 'a heartbeat');
    expect(readdirSync(lockDir)).toHaveLength(1);
    expect(await second.release()).toBe(true);
  });
});
