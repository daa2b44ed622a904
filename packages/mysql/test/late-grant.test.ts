/**
 * The issue-24 race (found on PostgreSQL by the API fuzz), checked on GET_LOCK: a waiter that
 * timed out or was aborted must have left the server (its GET_LOCK ended, a grant that raced
 * it released) by the time its acquire rejects, so a release right after it frees the lock
 * for a third party's immediate tryAcquire.
 */
import { LockTimeoutError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { mutexKey } from '../src/index.js';
import { adminQuery, eventually, holderOf, ms, provider, uniqueName } from './support.js';

const rounds = 10;

/** Sessions (other than the asking one) running a statement that mentions `key`. */
async function waitingOn(key: string): Promise<number> {
  const rows = await adminQuery<{ n: number }[]>(
    `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
     WHERE ID <> CONNECTION_ID() AND INFO LIKE CONCAT('%GET_LOCK%', ?, '%')`,
    [key],
  );
  return Number(rows[0]!.n);
}

describe('a waiter that gave up leaves nothing behind when its acquire rejects', () => {
  it('timeout of a queued waiter, release by the holder, then an immediate tryAcquire succeeds', async () => {
    const [one, two, three] = [provider(), provider(), provider()];
    for (let round = 0; round < rounds; round++) {
      const name = uniqueName(`timeout-${round}`);
      const key = mutexKey('', name);
      // Odd rounds: one provider for all three parts, as in the fuzz's counterexample.
      const [holders, waiters, probers] = round % 2 === 0 ? [one, two, three] : [one, one, one];
      const holder = await holders.createLock(name).acquire();
      const error = await waiters
        .createLock(name)
        .acquire({ timeout: 15 + (round % 4) * 5 })
        .catch((e: unknown) => e);
      expect(LockTimeoutError.isInstance(error)).toBe(true);
      expect(await waitingOn(key), `round ${round}: still waiting on the server`).toBe(0);
      expect(await holder.release()).toBe(true);
      const probe = await probers.createLock(name).tryAcquire();
      expect(probe, `round ${round}: tryAcquire after the release`).not.toBeNull();
      await probe!.release();
      expect(await holderOf(key)).toBeNull();
    }
  });

  it('abort of a queued waiter, release by the holder, then an immediate tryAcquire succeeds', async () => {
    const [one, two, three] = [provider(), provider(), provider()];
    for (let round = 0; round < rounds; round++) {
      const name = uniqueName(`abort-${round}`);
      const key = mutexKey('', name);
      const [holders, waiters, probers] = round % 2 === 0 ? [one, two, three] : [one, one, one];
      const holder = await holders.createLock(name).acquire();
      const controller = new AbortController();
      const waiting = waiters
        .createLock(name)
        .acquire({ signal: controller.signal })
        .catch((e: unknown) => e);
      await eventually(async () => (await waitingOn(key)) > 0, 5000, 'the waiter to queue');
      const reason = new Error('gave up');
      controller.abort(reason);
      expect(await waiting).toBe(reason);
      expect(await waitingOn(key), `round ${round}: still waiting on the server`).toBe(0);
      expect(await holder.release()).toBe(true);
      const probe = await probers.createLock(name).tryAcquire();
      expect(probe, `round ${round}: tryAcquire after the release`).not.toBeNull();
      await probe!.release();
    }
  });

  it('an abort in the same turn as the release, 300 times: the aborted writer never keeps the gate', async () => {
    // The conformance case races 10 times; a hold leaked by a race shows in a few percent of
    // rounds. (A wait sent as two statements in one query, tried and reverted, leaked so: a
    // KILL QUERY that landed between them left mysql2 waiting and the writer's session
    // holding the gate.)
    const [one, two, three] = [provider(), provider(), provider()];
    const name = uniqueName('abort-race');
    for (let round = 0; round < 300; round++) {
      const holder = await one.createReadWriteLock(name).acquireWrite();
      const controller = new AbortController();
      const waiting = two
        .createReadWriteLock(name)
        .acquireWrite({ signal: controller.signal })
        .then(
          (handle) => handle.release(),
          () => false,
        );
      await new Promise((resolve) => setTimeout(resolve, round % 3));
      void holder.release();
      controller.abort(new Error('race'));
      await waiting;
      const probe = await three
        .createReadWriteLock(name)
        .acquireWrite({ timeout: ms(2000) })
        .catch(() => null);
      expect(probe, `round ${round}: the write lock after the race`).not.toBeNull();
      await probe!.release();
    }
  }, 60_000);
});
