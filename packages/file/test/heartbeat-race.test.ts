/**
 * A heartbeat that lands after a takeover. proper-lockfile's heartbeat is two calls: `stat`
 * (is the lock directory's mtime still ours?), then `utimes` (set it to now). A holder held up
 * between the two (a long GC pause, a stalled disk, a stopped process) past its lease is taken
 * over: the contender claims its marker and puts its own lock directory at the same path. When
 * the held `utimes` then runs, it must not stamp the new holder's directory with the old
 * holder's (older) time — that would shorten the new holder's lease behind its back, letting a
 * third process take the lock while the new holder still holds it.
 *
 * Real directories and real providers; a spy on node's `fs.utimes` holds the old holder's call
 * (after its check, before its set) until the takeover is done.
 */
import fs, { statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { LockLostError } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FileGrant } from '../src/index.js';
import {
  failOnBackgroundCrash,
  providerFactory,
  ms as scaled,
  TEST_LEASE_MS,
  temporaryDirectory,
} from './support.js';

const directory = temporaryDirectory('heartbeat-race');
// Asynchronous I/O, so that the held call can wait (with `io: 'sync'` the check and the set
// run back to back, and only a paused process can come between them).
const provider = providerFactory(directory, { io: 'async' });

failOnBackgroundCrash();

type Utimes = typeof fs.utimes;
const realUtimes: Utimes = fs.utimes;

/** A held `utimes` call: run it for real with `resume()`. */
interface HeldCall {
  readonly path: string;
  readonly mtime: Date;
  resume(): Promise<NodeJS.ErrnoException | null>;
}

/**
 * Holds every `fs.utimes` call on a path under `prefix` (the heartbeats of one lock directory)
 * until released; `next()` resolves the next one held.
 */
function holdHeartbeats(prefix: string): {
  next(): Promise<HeldCall>;
  releaseAll(): void;
} {
  const held: HeldCall[] = [];
  const waiting: ((call: HeldCall) => void)[] = [];
  const parked: (() => void)[] = [];
  let holding = true;
  vi.spyOn(fs, 'utimes').mockImplementation(((
    path: fs.PathLike,
    atime: fs.TimeLike,
    mtime: fs.TimeLike,
    callback: fs.NoParamCallback,
  ) => {
    if (!holding || !String(path).startsWith(prefix)) {
      realUtimes(path, atime, mtime, callback);
      return;
    }
    let ran = false;
    const run = (): Promise<NodeJS.ErrnoException | null> =>
      new Promise((resolve) => {
        if (ran) return resolve(null);
        ran = true;
        realUtimes(path, atime, mtime, (error) => {
          callback(error);
          resolve(error);
        });
      });
    const call: HeldCall = { path: String(path), mtime: mtime as Date, resume: run };
    parked.push(() => void run());
    const taker = waiting.shift();
    if (taker) taker(call);
    else held.push(call);
  }) as Utimes);
  // The module namespace (`import * as fs`) the library reads follows the default export.
  syncBuiltinESMExports();
  return {
    next: () => {
      const call = held.shift();
      return call ? Promise.resolve(call) : new Promise((resolve) => waiting.push(resolve));
    },
    releaseAll: () => {
      holding = false;
      for (const run of parked.splice(0)) run();
    },
  };
}

afterEach(() => {
  vi.restoreAllMocks();
  syncBuiltinESMExports();
});

describe('a heartbeat held between its check and its set, past a takeover', () => {
  it("does not stamp the new holder's lock directory, and the old holder is told", async () => {
    const [old, taker, third] = [provider(), provider(), provider()];
    const oldHandle = await old.createLock('race').acquire();
    const { lockDir, marker } = grantBehind<FileGrant>(oldHandle).grant;
    expect(lockDir).toBeDefined();
    const heartbeats = holdHeartbeats(lockDir!);
    try {
      // The old holder's first heartbeat: checked (its mtime is ours), now held before the set.
      const stale = await heartbeats.next();
      expect(stale.path.startsWith(lockDir!)).toBe(true);
      // Its lease runs out; the taker claims its marker and lands its own lock directory.
      const takerHandle = await taker
        .createLock('race')
        .acquire({ timeout: scaled(TEST_LEASE_MS * 3) });
      const takerMtime = statSync(lockDir!).mtimeMs;
      expect(takerMtime).toBeGreaterThan(stale.mtime.getTime());
      // The old holder's set runs now.
      await stale.resume();
      // The taker's lease on disk is untouched (not rolled back to the old holder's stamp)...
      expect(statSync(lockDir!).mtimeMs).toBe(takerMtime);
      // ...so once the old stamp would be stale (and the taker's is not yet), a third process
      // cannot take the lock from the taker, which still holds it.
      const waitMs = stale.mtime.getTime() + TEST_LEASE_MS + 50 - Date.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      const intruder = await third.createLock('race').tryAcquire();
      if (intruder) {
        const takerStillHolds = !takerHandle.signal.aborted;
        await intruder.release();
        expect(takerStillHolds, 'a third process took the lock while the taker held it').toBe(
          false,
        );
      }
      // The old holder knows it lost the lock (it is not the owner any more).
      if (!oldHandle.signal.aborted) {
        await new Promise((resolve) =>
          oldHandle.signal.addEventListener('abort', resolve, { once: true }),
        );
      }
      expect(LockLostError.isInstance(oldHandle.signal.reason)).toBe(true);
      expect(fs.existsSync(marker)).toBe(false);
      heartbeats.releaseAll();
      expect(await oldHandle.release()).toBe(false);
      expect(await takerHandle.release()).toBe(true);
    } finally {
      heartbeats.releaseAll();
    }
  }, 30_000);
});
