/**
 * Issue 24 (the API fuzz, seed 24): a waiter that timed out was still queued on the server
 * when its acquire rejected, so a release right after granted the lock to it and a third
 * party's immediate tryAcquire was refused. A timed-out or aborted acquire must have left the
 * server queue (and released a grant that raced it) by the time it rejects.
 */
import { LockTimeoutError } from '@lockkit/core';
import { describe, expect, inject, it } from 'vitest';
import { advisoryKey } from '../src/index.js';
import { advisoryLocks, Harness, uniqueName, waitFor } from './support.js';

const url = inject('lockkitServers').postgresUrl!;
const harness = new Harness(url);
const rounds = 10;

describe('a waiter that gave up leaves nothing behind when its acquire rejects', () => {
  it('timeout of a queued waiter, release by the holder, then an immediate tryAcquire succeeds', async () => {
    const [one, two, three] = [harness.provider(), harness.provider(), harness.provider()];
    const admin = await harness.client();
    for (let round = 0; round < rounds; round++) {
      const name = uniqueName(`timeout-${round}`);
      // Odd rounds: one provider for all three parts, as in the fuzz's counterexample.
      const [holders, waiters, probers] = round % 2 === 0 ? [one, two, three] : [one, one, one];
      const holder = await holders.createLock(name).acquire();
      const error = await waiters
        .createLock(name)
        .acquire({ timeout: 15 + (round % 4) * 5 })
        .catch((e: unknown) => e);
      expect(LockTimeoutError.isInstance(error)).toBe(true);
      // At the rejection the server has the holder's lock and nothing else.
      const rows = await advisoryLocks(admin, advisoryKey('', 'mutex', name));
      expect(
        rows.map((row) => row.granted),
        `round ${round}`,
      ).toEqual([true]);
      expect(await holder.release()).toBe(true);
      const probe = await probers.createLock(name).tryAcquire();
      expect(probe, `round ${round}: tryAcquire after the release`).not.toBeNull();
      await probe!.release();
    }
  });

  it('abort of a queued waiter, release by the holder, then an immediate tryAcquire succeeds', async () => {
    const [one, two, three] = [harness.provider(), harness.provider(), harness.provider()];
    const admin = await harness.client();
    for (let round = 0; round < rounds; round++) {
      const name = uniqueName(`abort-${round}`);
      const key = advisoryKey('', 'mutex', name);
      const [holders, waiters, probers] = round % 2 === 0 ? [one, two, three] : [one, one, one];
      const holder = await holders.createLock(name).acquire();
      const controller = new AbortController();
      const waiting = waiters
        .createLock(name)
        .acquire({ signal: controller.signal })
        .catch((e: unknown) => e);
      await waitFor(
        async () => (await advisoryLocks(admin, key)).some((row) => !row.granted),
        5000,
        'the waiter to queue',
      );
      const reason = new Error('gave up');
      controller.abort(reason);
      expect(await waiting).toBe(reason);
      const rows = await advisoryLocks(admin, key);
      expect(
        rows.map((row) => row.granted),
        `round ${round}`,
      ).toEqual([true]);
      expect(await holder.release()).toBe(true);
      const probe = await probers.createLock(name).tryAcquire();
      expect(probe, `round ${round}: tryAcquire after the release`).not.toBeNull();
      await probe!.release();
    }
  });
});
