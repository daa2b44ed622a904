import { rmSync } from 'node:fs';
import { LockLostError } from '@lockkit/core';
import { delay, grantBehind } from '@lockkit/core/backend';
import { describe, expect, it } from 'vitest';
import type { FileGrant } from '../src/index.js';
import { ms, nextWait, providerFactory, temporaryDirectory, waitUntil } from './support.js';

// `io: 'async'` runs every call on libuv's thread pool; the algorithms are the same, so
// these cases check the plumbing (ordering, races, cleanup) rather than repeat the suite.
const directory = temporaryDirectory('async-io');
const asyncProvider = providerFactory(directory, { io: 'async', pollIntervalMs: 60_000 });
const syncProvider = providerFactory(directory, { pollIntervalMs: 60_000 });

describe("io: 'async'", () => {
  it('50 concurrent acquirers on async and sync providers never overlap; tokens increase', async () => {
    const providers = [asyncProvider(), syncProvider(), asyncProvider()];
    let inside = 0;
    let overlaps = 0;
    const tokens: bigint[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        providers[i % 3]!.createLock('parallel').withLock(
          async (handle) => {
            inside += 1;
            if (inside > 1) overlaps += 1;
            tokens.push(handle.fencingToken);
            await delay(1);
            inside -= 1;
          },
          { timeout: 30_000 },
        ),
      ),
    );
    expect(overlaps).toBe(0);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
  }, 60_000);

  it('hands a released lock to a waiter at once (fs.watch, not the poll)', async () => {
    const holder = await asyncProvider().createLock('handoff').acquire();
    const waits = nextWait();
    const waiting = asyncProvider().createLock('handoff').acquire({ timeout: 5000 });
    await waits;
    const releasedAt = performance.now();
    await holder.release();
    const handle = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(ms(100));
    await handle.release();
  });

  it('keeps new readers out while a writer waits, then hands the writer the lock', async () => {
    const [p1, p2, p3] = [asyncProvider(), asyncProvider(), asyncProvider()];
    const reader = await p1.createReadWriteLock('rw').acquireRead();
    const writer = p2.createReadWriteLock('rw').acquireWrite({ timeout: 10_000 });
    await waitUntil(
      async () => {
        const probe = await p3.createReadWriteLock('rw').tryAcquireRead();
        await probe?.release();
        return probe === null;
      },
      5000,
      'new readers to be refused',
    );
    await reader.release();
    const handle = await writer;
    expect(handle.fencingToken).toBeGreaterThan(reader.fencingToken);
    expect(await p3.createReadWriteLock('rw').tryAcquireRead()).toBeNull();
    await handle.release();
  });

  it('a semaphore reaches its limit and never exceeds it', async () => {
    const providers = [asyncProvider(), asyncProvider()];
    let inside = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        providers[i % 2]!.createSemaphore('limit', 3).withPermit(
          async () => {
            inside += 1;
            peak = Math.max(peak, inside);
            await delay(30);
            inside -= 1;
          },
          { timeout: 30_000 },
        ),
      ),
    );
    expect(peak).toBe(3);
  }, 60_000);

  it('detects a removed lock directory', async () => {
    const provider = asyncProvider();
    const handle = await provider.createLock('lost').acquire();
    rmSync(grantBehind<FileGrant>(handle).grant.lockDir!, { recursive: true });
    await waitUntil(() => handle.signal.aborted, ms(provider.capabilities.lostDetectionMs), 'loss');
    expect(LockLostError.isInstance(handle.signal.reason)).toBe(true);
    expect(await handle.release()).toBe(false);
  });
});
