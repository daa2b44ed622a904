import { mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyDirName } from '../src/index.js';
import { ms, nextWait, providerFactory, TEST_LEASE_MS, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('waiting');
// A safety poll far longer than any wait below: only fs.watch and stale timers can wake.
const provider = providerFactory(directory, { pollIntervalMs: 60_000 });

/** ms from `release()` to the waiter (which must be waiting already) holding the lock. */
async function handoffMs(
  release: () => Promise<unknown>,
  waiting: Promise<{ release(): Promise<boolean> }>,
): Promise<number> {
  const releasedAt = performance.now();
  await release();
  const handle = await waiting;
  const ms = performance.now() - releasedAt;
  await handle.release();
  return ms;
}

describe('waiting is notified (fs.watch), not polled', () => {
  it('a mutex waiter wakes on release without the safety poll', async () => {
    const holder = await provider().createLock('mutex').acquire();
    const waits = nextWait();
    const waiting = provider().createLock('mutex').acquire({ timeout: 5000 });
    await waits;
    expect(await handoffMs(() => holder.release(), waiting)).toBeLessThan(ms(100));
  });

  it('a semaphore waiter wakes when a permit is released', async () => {
    const holders = [
      await provider().createSemaphore('permits', 2).acquire(),
      await provider().createSemaphore('permits', 2).acquire(),
    ];
    const waits = nextWait();
    const waiting = provider().createSemaphore('permits', 2).acquire({ timeout: 5000 });
    await waits;
    expect(await handoffMs(() => holders[0]!.release(), waiting)).toBeLessThan(ms(100));
    await holders[1]!.release();
  });

  it('readers queued behind a writer wake when it releases', async () => {
    const writer = await provider().createReadWriteLock('rw').acquireWrite();
    const waits = nextWait();
    const waiting = provider().createReadWriteLock('rw').acquireRead({ timeout: 5000 });
    await waits;
    expect(await handoffMs(() => writer.release(), waiting)).toBeLessThan(ms(100));
  });

  it('an abandoned lock is taken over when its heartbeat turns stale (a timer, not the poll)', async () => {
    // A dead holder whose last heartbeat was (lease - 300 ms) ago.
    const lockDir = join(directory, keyDirName('', 'mutex', 'abandoned'), 'lock');
    mkdirSync(join(lockDir, '1.dead00.x.1'), { recursive: true });
    const lastBeat = (Date.now() - TEST_LEASE_MS + 300) / 1000;
    utimesSync(lockDir, lastBeat, lastBeat); // the lock directory's mtime is the heartbeat
    const started = performance.now();
    const handle = await provider().createLock('abandoned').acquire({ timeout: 5000 });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(ms(600));
    await handle.release();
  });
});
