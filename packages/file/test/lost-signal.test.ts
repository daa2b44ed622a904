import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type LockHandle, LockLostError } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import { describe, expect, it } from 'vitest';
import { createFileLockProvider, type FileGrant } from '../src/index.js';
import {
  failOnBackgroundCrash,
  providerFactory,
  ms as scaled,
  startChild,
  TEST_LEASE_MS,
  temporaryDirectory,
} from './support.js';

const directory = temporaryDirectory('lost');
const provider = providerFactory(directory);
const detectionMs = provider().capabilities.lostDetectionMs;

/** Resolves the signal's reason when it aborts, with the ms it took from `since`. */
function lostAfter(handle: LockHandle, since: number): Promise<{ reason: unknown; ms: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the signal did not abort')), 5000);
    const done = (): void => {
      clearTimeout(timer);
      resolve({ reason: handle.signal.reason, ms: performance.now() - since });
    };
    if (handle.signal.aborted) done();
    else handle.signal.addEventListener('abort', done, { once: true });
  });
}

// Background work must report through the signal, never as a crash.
failOnBackgroundCrash();

describe('lost signal', () => {
  it('fires when the lock directory is removed, within lostDetectionMs', async () => {
    const [p1, p2] = [provider(), provider()];
    const handle = await p1.createLock('removed').acquire();
    const removedAt = performance.now();
    rmSync(grantBehind<FileGrant>(handle).grant.lockDir!, { recursive: true });
    const { reason, ms: elapsed } = await lostAfter(handle, removedAt);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(elapsed).toBeLessThanOrEqual(scaled(detectionMs));
    expect(await handle.release()).toBe(false);
    const next = await p2.createLock('removed').tryAcquire();
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('fires when the whole lock directory tree is removed, and the provider recovers', async () => {
    const tree = join(directory, 'tree');
    const own = createFileLockProvider({ directory: tree, leaseMs: TEST_LEASE_MS });
    const handles = [
      await own.createLock('x').acquire(),
      await own.createReadWriteLock('y').acquireRead(),
      await own.createSemaphore('z', 2).acquire(),
    ];
    rmSync(tree, { recursive: true });
    for (const handle of handles) {
      expect(LockLostError.isInstance((await lostAfter(handle, 0)).reason)).toBe(true);
      expect(await handle.release()).toBe(false);
    }
    const again = await own.createLock('x').acquire({ timeout: 1000 });
    expect(again.fencingToken).toBe(1n); // the counters were deleted with the tree
    await again.release();
    await own.close();
  });

  it('fires when the lease runs out without extension (autoExtend: false), and the lock frees up', async () => {
    const fixed = createFileLockProvider({ directory, leaseMs: TEST_LEASE_MS, autoExtend: false });
    const handle = await fixed.createLock('fixed-lease').acquire();
    const started = performance.now();
    const { reason, ms: elapsed } = await lostAfter(handle, started);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(String((reason as Error).message)).toContain('lease ran out');
    expect(elapsed).toBeLessThanOrEqual(scaled(TEST_LEASE_MS + 50));
    const next = await provider().createLock('fixed-lease').acquire({ timeout: TEST_LEASE_MS });
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    expect(await handle.release()).toBe(false);
    await next.release();
    await fixed.close();
  });

  it('fires when the heartbeat stalls past the lease and another process takes over', async () => {
    const child = await startChild('contender', {
      LOCKKIT_TEST_FILE_DIR: directory,
      LOCKKIT_TEST_LEASE_MS: String(TEST_LEASE_MS),
    });
    const handle = await provider().createLock('stall').acquire();
    child.send({ cmd: 'acquire', name: 'stall', timeoutMs: 10 * TEST_LEASE_MS });
    // Block this process's event loop (no heartbeat can run) for longer than the lease.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, TEST_LEASE_MS + 500);
    const unblockedAt = performance.now();
    const { reason, ms: elapsed } = await lostAfter(handle, unblockedAt);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(elapsed).toBeLessThan(scaled(100)); // the expiry is overdue: it fires at once
    const taken = await child.next();
    expect(taken).toMatchObject({ event: 'acquire', ok: true });
    expect(BigInt(String(taken['token']))).toBeGreaterThan(handle.fencingToken);
    expect(await handle.release()).toBe(false);
    child.send({ cmd: 'release' });
    expect(await child.next()).toMatchObject({ event: 'released', held: true });
    await child.kill();
  }, 30_000);

  it('fires after a stall past the lease even when nobody took over (the refresh came too late)', async () => {
    const handle = await provider().createLock('lonely-stall').acquire();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, TEST_LEASE_MS + 200);
    const { reason } = await lostAfter(handle, performance.now());
    expect(LockLostError.isInstance(reason)).toBe(true);
    const next = await provider().createLock('lonely-stall').tryAcquire();
    expect(next).not.toBeNull(); // the stale marker is taken over at once
    expect(await handle.release()).toBe(false);
    await next?.release();
  });

  it('fires for a reader whose marker is removed', async () => {
    const reader = await provider().createReadWriteLock('reader-removed').acquireRead();
    const removedAt = performance.now();
    rmSync(grantBehind<FileGrant>(reader).grant.marker, { recursive: true });
    const { reason, ms: elapsed } = await lostAfter(reader, removedAt);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(elapsed).toBeLessThanOrEqual(scaled(detectionMs));
  });
});
