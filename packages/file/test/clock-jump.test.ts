/**
 * Clock faults with libfaketime (Debian's `libfaketime`): a lock file's lease is an mtime
 * heartbeat that other processes compare with THEIR wall clock, so a process whose wall clock
 * is off by more than the lease breaks mutual exclusion. These tests show it happening, and
 * what still holds: the holder's signal reports the loss within `lostDetectionMs`, its
 * `release()` resolves false, and a fence refuses its writes once the newer token wrote.
 * Skipped, with the reason printed, where libfaketime is not installed.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LockLostError } from '@lockkit/core';
import { describe, expect, it, vi } from 'vitest';
import { FencingCounters } from '../src/fencing-counter.js';
import { ms, providerFactory, startChild, TEST_LEASE_MS, temporaryDirectory } from './support.js';

const libfaketime = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((path) => existsSync(path));
if (!libfaketime) {
  console.warn('clock-jump tests skipped: libfaketime is not installed (apt-get install faketime)');
}

const directory = temporaryDirectory('clock');
const provider = providerFactory(directory);
const env = { LOCKKIT_TEST_FILE_DIR: directory, LOCKKIT_TEST_LEASE_MS: String(TEST_LEASE_MS) };
/** libfaketime re-reads this file on every clock call: writing it jumps the clock. */
const clockFile = join(directory, 'faketime-offset');

/** A contender process whose wall clock (not its monotonic clock) is `offset` off. */
function skewedContender(offset: string) {
  writeFileSync(clockFile, offset);
  return startChild('contender', {
    ...env,
    LD_PRELOAD: libfaketime ?? '',
    FAKETIME_TIMESTAMP_FILE: clockFile,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  });
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

describe.skipIf(!libfaketime)('wall-clock faults on the file backend (libfaketime)', () => {
  it('control: a contender whose clock is right does not get a held lock', async () => {
    const holder = await provider().createLock('control').acquire();
    const contender = await skewedContender('+0');
    contender.send({ cmd: 'try', name: 'control' });
    expect(await contender.next()).toMatchObject({ ok: false });
    expect(await holder.release()).toBe(true);
    await contender.kill();
  });

  it('a contender whose clock jumped a minute ahead takes a live lease over; the holder is told within lostDetectionMs and fencing refuses it', async () => {
    const holderProvider = provider();
    const holder = await holderProvider.createLock('ahead').acquire();
    const write = fence();
    expect(write(holder.fencingToken)).toBe(true);
    const lost = new Promise<number>((resolve) =>
      holder.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
    );
    const contender = await skewedContender('+60');
    contender.send({ cmd: 'try', name: 'ahead' });
    const takeover = await contender.next();
    const takenAt = performance.now();
    // Mutual exclusion is broken: the lease looked a minute old to the contender.
    expect(takeover).toMatchObject({ ok: true });
    const newer = BigInt(takeover['token'] as string);
    expect(newer).toBeGreaterThan(holder.fencingToken);
    expect(write(newer)).toBe(true);
    // The holder still believes until its next heartbeat finds the lock taken...
    expect(write(holder.fencingToken)).toBe(false);
    // ...then its signal reports the loss, within the declared bound.
    const lostAt = await lost;
    console.log(
      `clock +60 s: holder told ${Math.round(lostAt - takenAt)} ms after the takeover (bound ${holderProvider.capabilities.lostDetectionMs} ms): ${String(holder.signal.reason)}`,
    );
    expect(holder.signal.reason).toBeInstanceOf(LockLostError);
    expect(lostAt - takenAt).toBeLessThanOrEqual(
      ms(holderProvider.capabilities.lostDetectionMs + 100),
    );
    expect(await holder.release()).toBe(false);
    await contender.kill();
  });

  it('a holder whose clock jumps a minute back loses its lease to a contender; its release() resolves false', async () => {
    const holder = await skewedContender('+0');
    holder.send({ cmd: 'acquire', name: 'behind' });
    const granted = await holder.next();
    expect(granted).toMatchObject({ ok: true });
    writeFileSync(clockFile, '-60');
    // Its next heartbeat stamps the lease a minute in the past: stale to everyone else.
    const contender = await provider()
      .createLock('behind')
      .acquire({ timeout: ms(TEST_LEASE_MS * 2) });
    expect(contender.fencingToken).toBeGreaterThan(BigInt(granted['token'] as string));
    holder.send({ cmd: 'release' });
    expect(await holder.next()).toMatchObject({ event: 'released', held: false });
    expect(await contender.release()).toBe(true);
    await holder.kill();
  });

  it('a takeover between landing the lock and drawing its token leaves the late process without the lock (regression: release-lied under pnpm chaos --faults clock)', async () => {
    // A contender whose clock is a minute ahead sees our freshly landed lock as stale and
    // takes it over at once. Here it does so deterministically in the window between our
    // landing and our token draw: the draw is held until the contender has the lock.
    const contender = await skewedContender('+60');
    const draw = FencingCounters.prototype.next;
    let takeover: Record<string, unknown> | undefined;
    const held = vi.spyOn(FencingCounters.prototype, 'next').mockImplementationOnce(async function (
      this: FencingCounters,
      keyDir: string,
    ) {
      contender.send({ cmd: 'try', name: 'landing' });
      takeover = await contender.next();
      return draw.call(this, keyDir);
    });
    try {
      const late = await provider().createLock('landing').tryAcquire();
      expect(held).toHaveBeenCalled();
      expect(takeover).toMatchObject({ ok: true });
      // Before the fix the late process was granted too, with a token ABOVE the contender's
      // (it drew second): a fence then refused the real holder's writes, and the real
      // holder's release() → true looked like a lie next to a newer grant.
      expect(late).toBeNull();
      contender.send({ cmd: 'release' });
      expect(await contender.next()).toMatchObject({ event: 'released', held: true });
    } finally {
      held.mockRestore();
      await contender.kill();
    }
  });
});
