import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { LockLostError } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import { describe, expect, it } from 'vitest';
import { createFileLockProvider, type FileGrant, keyDirName } from '../src/index.js';
import { providerFactory, startChild, TEST_LEASE_MS, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('ownership');
const provider = providerFactory(directory);

/** Makes a held lock directory look abandoned (its heartbeat long past the lease), as after a stall. */
function backdate(path: string): void {
  const longAgo = (Date.now() - 10 * TEST_LEASE_MS) / 1000;
  utimesSync(path, longAgo, longAgo);
}

describe('lock directory and ownership', () => {
  it('a held lock is its lock directory with exactly our marker inside; release removes it', async () => {
    const handle = await provider().createLock('layout').acquire();
    const { grant } = grantBehind<FileGrant>(handle);
    const lockDir = join(directory, keyDirName('', 'mutex', 'layout'), 'lock');
    expect(grant.lockDir).toBe(lockDir);
    expect(readdirSync(lockDir)).toEqual([grant.marker.slice(lockDir.length + 1)]);
    expect(await handle.release()).toBe(true);
    expect(existsSync(lockDir)).toBe(false);
    // What stays is the fencing counter, whose name is the last token.
    expect(readdirSync(join(directory, keyDirName('', 'mutex', 'layout')))).toEqual([
      `fence.${handle.fencingToken}`,
    ]);
  });

  it('a stalled holder is taken over; its late release reports false and leaves the new holder alone', async () => {
    const [p1, p2, p3] = [provider(), provider(), provider()];
    const stalled = await p1.createLock('takeover').acquire();
    backdate(grantBehind<FileGrant>(stalled).grant.lockDir!);
    const next = await p2.createLock('takeover').tryAcquire();
    expect(next).not.toBeNull();
    expect(next!.fencingToken).toBeGreaterThan(stalled.fencingToken);
    expect(await stalled.release()).toBe(false);
    expect(await p3.createLock('takeover').tryAcquire()).toBeNull();
    expect(next!.signal.aborted).toBe(false);
    expect(await next!.release()).toBe(true);
  });

  it('the stalled holder learns it lost the lock at its next heartbeat', async () => {
    const [p1, p2] = [provider(), provider()];
    const stalled = await p1.createLock('late-heartbeat').acquire();
    backdate(grantBehind<FileGrant>(stalled).grant.lockDir!);
    const next = await p2.createLock('late-heartbeat').tryAcquire();
    expect(next).not.toBeNull();
    const reason = await new Promise((resolve) =>
      stalled.signal.addEventListener('abort', () => resolve(stalled.signal.reason)),
    );
    expect(LockLostError.isInstance(reason)).toBe(true);
    await next!.release();
  });

  it('a stale reader marker is claimed by a writer; the reader finds out', async () => {
    const [p1, p2] = [provider(), provider()];
    const reader = await p1.createReadWriteLock('stale-reader').acquireRead();
    backdate(grantBehind<FileGrant>(reader).grant.marker);
    const writer = await p2.createReadWriteLock('stale-reader').tryAcquireWrite();
    expect(writer).not.toBeNull();
    expect(await reader.release()).toBe(false);
    expect(await writer!.release()).toBe(true);
  });

  it('a stale permit is claimed when the semaphore is full', async () => {
    const [p1, p2] = [provider(), provider()];
    const first = await p1.createSemaphore('stale-permit', 2).acquire();
    const second = await p1.createSemaphore('stale-permit', 2).acquire();
    expect(await p2.createSemaphore('stale-permit', 2).tryAcquire()).toBeNull();
    backdate(grantBehind<FileGrant>(first).grant.marker);
    const third = await p2.createSemaphore('stale-permit', 2).tryAcquire();
    expect(third).not.toBeNull();
    expect(await p2.createSemaphore('stale-permit', 2).tryAcquire()).toBeNull();
    expect(await first.release()).toBe(false);
    for (const handle of [second, third!]) expect(await handle.release()).toBe(true);
  });

  it('a process that exits without releasing frees its locks at once (exit hook)', async () => {
    const child = await startChild('contender', {
      LOCKKIT_TEST_FILE_DIR: directory,
      LOCKKIT_TEST_LEASE_MS: '60000',
    });
    child.send({ cmd: 'acquire', name: 'exit-hook' });
    expect(await child.next()).toMatchObject({ ok: true });
    child.send({ cmd: 'acquire', name: 'exit-hook-rw', kind: 'read' });
    expect(await child.next()).toMatchObject({ ok: true });
    expect(await provider().createLock('exit-hook').tryAcquire()).toBeNull();
    child.send({ cmd: 'exit' });
    await child.next().catch(() => undefined); // exits without answering
    const mutex = await provider().createLock('exit-hook').tryAcquire();
    const writer = await provider().createReadWriteLock('exit-hook-rw').tryAcquireWrite();
    expect(mutex).not.toBeNull();
    expect(writer).not.toBeNull();
    await mutex?.release();
    await writer?.release();
    expect(
      readdirSync(join(directory, '.spares')).filter((name) => name.startsWith(`${child.pid}.`)),
    ).toEqual([]);
  });

  it('after release and close only key directories with fencing counters remain', async () => {
    const own = createFileLockProvider({ directory: join(directory, 'tidy') });
    const handles = [
      await own.createLock('a').acquire(), // each key draws token 1
      await own.createReadWriteLock('b').acquireRead(),
      await own.createReadWriteLock('c').acquireWrite(),
      await own.createSemaphore('d', 3).acquire(),
    ];
    expect(await own.createLock('a').tryAcquire({ timeout: 20 })).toBeNull();
    for (const handle of handles) await handle.release();
    await own.close();
    const left = readdirSync(join(directory, 'tidy'), { recursive: true }).map(String).sort();
    const keys = [
      keyDirName('', 'mutex', 'a'),
      keyDirName('', 'read', 'b'),
      keyDirName('', 'write', 'c'),
      keyDirName('', 'semaphore', 'd'),
    ];
    expect(left).toEqual(keys.flatMap((key) => [key, join(key, 'fence.1')]).sort());
  });
});
