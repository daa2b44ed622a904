/**
 * A Redis SERVER's wall clock jumping (an NTP step, `date -s`, a VM restored from a snapshot).
 * Redis stores a key's expiry as an absolute wall-clock time and compares it with its own
 * clock, so a jump forward ends every lease early and a jump back stretches them. The server
 * runs under Debian's libfaketime, whose timestamp file it re-reads on every clock call
 * (writing the file jumps the clock; the monotonic clock is left alone). Debian's redis-server
 * is linked with jemalloc, which libfaketime cannot start under ("Unexpected recursive calls
 * to clock_gettime()"), so glibc's malloc is interposed first (libc_malloc_debug.so, part of
 * glibc). Skipped, with the reason printed, where either library is missing.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockLostError } from '@lockkit/core';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider } from '../src/index.js';
import { scaled, testLeaseMs } from './support.js';

const libraryDirectories = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib'];
function findLibrary(name: string): string | undefined {
  return libraryDirectories.map((dir) => join(dir, name)).find((path) => existsSync(path));
}
const libfaketime = findLibrary('faketime/libfaketime.so.1');
const glibcMalloc = findLibrary('libc_malloc_debug.so.0');
const missing = [
  libfaketime ? undefined : 'libfaketime (apt-get install faketime)',
  glibcMalloc ? undefined : "glibc's libc_malloc_debug.so.0",
].filter((name) => name !== undefined);
if (missing.length > 0) {
  console.warn(`server clock-jump tests skipped: ${missing.join(' and ')} not found`);
}

let server: ServerHandle | undefined;
let clockFile = '';
let scratch = '';
const providers: RedisLockProvider[] = [];

/** Sets the server's wall clock to the real time plus `offset` (libfaketime syntax: `+60`). */
function setServerClock(offset: string): void {
  writeFileSync(clockFile, offset);
}

function provider(): RedisLockProvider {
  const created = createRedisLockProvider({ nodes: [server!.url], leaseMs: testLeaseMs });
  providers.push(created);
  return created;
}

/** Kleppmann's storage service: refuses a token below the highest it has accepted. */
function fence(): (token: bigint) => boolean {
  let highest = -1n;
  return (token) => {
    if (token < highest) return false;
    highest = token;
    return true;
  };
}

describe.skipIf(missing.length > 0)('a Redis server whose wall clock jumps (libfaketime)', () => {
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'lockkit-redis-clock-'));
    clockFile = join(scratch, 'faketime-offset');
    setServerClock('+0');
    [server] = await startRedisServers(1, {
      useEnvironment: false,
      environment: {
        LD_PRELOAD: `${glibcMalloc} ${libfaketime}`,
        FAKETIME_TIMESTAMP_FILE: clockFile,
        FAKETIME_NO_CACHE: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      },
    });
  });

  afterAll(async () => {
    await Promise.all(providers.map((created) => created.close()));
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('a jump forward past the lease ends a live hold early: a contender gets the lock, the fence refuses the holder, and its signal reports the loss', async () => {
    const holderProvider = provider();
    const holder = await holderProvider.createLock('forward').acquire();
    const write = fence();
    expect(write(holder.fencingToken)).toBe(true);
    const lost = new Promise<number>((resolve) =>
      holder.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
    );
    try {
      setServerClock('+60');
      const jumpedAt = performance.now();
      // The holder keeps extending: without the jump this acquire would time out.
      const contender = await provider()
        .createLock('forward')
        .acquire({ timeout: scaled(testLeaseMs) });
      const grantedAt = performance.now();
      // Mutual exclusion is broken, but not fencing: the counter key has no expiry.
      expect(contender.fencingToken).toBeGreaterThan(holder.fencingToken);
      expect(write(contender.fencingToken)).toBe(true);
      expect(write(holder.fencingToken)).toBe(false);
      const lostAt = await lost;
      console.log(
        `server clock +60 s: contender granted ${Math.round(grantedAt - jumpedAt)} ms after the jump; holder told ${Math.round(lostAt - jumpedAt)} ms after it (declared lostDetectionMs ${holderProvider.capabilities.lostDetectionMs}): ${String(holder.signal.reason)}`,
      );
      expect(holder.signal.reason).toBeInstanceOf(LockLostError);
      expect(lostAt - jumpedAt).toBeLessThanOrEqual(
        scaled(holderProvider.capabilities.lostDetectionMs + 100),
      );
      expect(await holder.release()).toBe(false);
      expect(await contender.release()).toBe(true);
    } finally {
      setServerClock('+0');
    }
  });

  it('a jump back keeps a live hold, and keeps an abandoned one for the jump past its lease (the holder was told at its lease end)', async () => {
    const holders = provider();
    const live = await holders.createLock('back-live').acquire();
    const abandoned = await holders.createLock('back-abandoned').acquire({ autoExtend: false });
    const abandonedLost = new Promise<void>((resolve) =>
      abandoned.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    const contenders = provider();
    try {
      setServerClock('-60');
      // Twice the lease: the live holder extends several times meanwhile, and the abandoned
      // hold (never extended) would have expired with the clock right.
      const early = await contenders
        .createLock('back-abandoned')
        .tryAcquire({ timeout: scaled(testLeaseMs * 2) });
      expect(early).toBeNull();
      // The abandoned holder's own lease ran out on its monotonic clock: it was told.
      await abandonedLost;
      expect(abandoned.signal.reason).toBeInstanceOf(LockLostError);
      expect(live.signal.aborted).toBe(false);
      expect(await live.release()).toBe(true);
      // Setting the clock right is a jump forward of a minute (it would end a live hold, as
      // above): the abandoned key's expiry is in the past, the lock is free.
      setServerClock('+0');
      const later = await contenders
        .createLock('back-abandoned')
        .acquire({ timeout: scaled(testLeaseMs) });
      expect(later.fencingToken).toBeGreaterThan(abandoned.fencingToken);
      expect(await later.release()).toBe(true);
    } finally {
      setServerClock('+0');
    }
  });
});
