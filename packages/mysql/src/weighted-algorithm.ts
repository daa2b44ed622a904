import { now } from '@lockkit/core/backend';
import type { AlgorithmContext, Held, LockAlgorithm } from './lock-algorithm.js';
import { releaseEverything } from './lock-algorithm.js';
import type { LockConnection } from './lock-connection.js';
import type { LockKeys } from './lock-keys.js';
import { isInterrupted, lockError } from './mysql-errors.js';
import { blockingStatement, secondsUntil } from './server-wait.js';
import { candidates, firstFreeExpression, type Slots } from './slot-scan.js';

/** Slots probed per statement (as in slot-scan.ts). */
const BATCH = 64;

function permitSlots(keys: LockKeys, maxCount: number): Slots {
  return { count: maxCount, key: keys.slot, queue: keys.queue };
}

/**
 * Takes up to `count` free slots not in `mine`, lowest first (one statement per slot taken),
 * and adds them to `mine`. Slots the session holds for other grants are skipped too.
 */
async function takeFree(
  connection: LockConnection,
  slots: Slots,
  count: number,
  mine: Set<number>,
): Promise<void> {
  let wanted = count;
  for (let from = 0; from < slots.count && wanted > 0; from += BATCH) {
    let indexes = candidates(connection, slots, from, Math.min(slots.count, from + BATCH)).filter(
      (index) => !mine.has(index),
    );
    while (wanted > 0 && indexes.length > 0) {
      const { sql, values } = firstFreeExpression(slots, indexes);
      const rows = await connection.query<{ slot: number | string }[]>(
        `SELECT ${sql} AS slot`,
        values,
      );
      const slot = Number(rows[0]?.slot);
      if (!(slot >= 0)) break; // none of these is free
      mine.add(slot);
      wanted -= 1;
      indexes = indexes.filter((index) => index > slot); // those before it were not free
    }
  }
}

/** Gives back slots taken for a request that will not be granted; never throws. */
async function giveBack(connection: LockConnection, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await connection
    .query(`DO ${keys.map(() => 'RELEASE_LOCK(?)').join(', ')}`, keys)
    .catch(() => undefined);
}

/** The token for slots just taken; on failure they are given back. */
async function countSlots(
  context: AlgorithmContext,
  connection: LockConnection,
  request: { readonly name: string },
  keys: LockKeys,
  slots: readonly number[],
): Promise<Held> {
  const [first, ...more] = slots.map((slot) => keys.slot(slot));
  for (let attempt = 0; ; attempt++) {
    try {
      const token = await context.fencing.next(connection, keys.base);
      return { key: first as string, token, wake: keys.queue, more };
    } catch (error) {
      // A stray wake-up may interrupt the counter; it is safe to bump again (tokens may skip).
      if (isInterrupted(error) && attempt < 3) continue;
      await giveBack(connection, [first as string, ...more]);
      throw lockError(request.name, error);
    }
  }
}

/**
 * Weighted semaphore request (`permits` > 1): n permit locks `<base>.s<i>` on one session,
 * all or none. Head of line: a waiting weighted request takes the gate `<base>.w` (weighted
 * waiters line up on it), then the queue `<base>.q` (behind a one-permit head), and collects
 * its slots as they come free, keeping the ones it got; attempts (weighted or not, see
 * semaphore-algorithm.ts) take no slot while the gate is held, and later waiters queue behind.
 * An attempt that does not get all its slots gives back the ones it got at once.
 */
export const weightedAlgorithm: LockAlgorithm = {
  waitsInOneStatement: false,
  // Head of line: a one-permit attempt after the wait event must find the gate taken.
  announcesWaiting: true,
  conflicts: () => [],

  async attempt(context, connection, request, keys) {
    const permits = request.permits ?? 1;
    const slots = permitSlots(keys, request.maxCount);
    const mine = new Set<number>();
    try {
      const rows = await connection.query<{ open: number | null }[]>(
        'SELECT IS_FREE_LOCK(?) AS open',
        [keys.gate],
      );
      if (Number(rows[0]?.open) !== 1) return undefined; // a weighted request waits ahead
      await takeFree(connection, slots, permits, mine);
    } catch (error) {
      await giveBack(
        connection,
        [...mine].map((slot) => keys.slot(slot)),
      );
      throw lockError(request.name, error);
    }
    if (mine.size < permits) {
      await giveBack(
        connection,
        [...mine].map((slot) => keys.slot(slot)),
      );
      return undefined;
    }
    return countSlots(context, connection, request, keys, [...mine]);
  },

  async wait(context, connection, request, keys, wait) {
    const permits = request.permits ?? 1;
    const slots = permitSlots(keys, request.maxCount);
    for (;;) {
      if (wait.signal.aborted || now() >= wait.deadline) return undefined;
      const mine = new Set<number>();
      let failure: unknown;
      // The gate first (weighted waiters line up on it, and no attempt takes a slot from now
      // on), then the queue (behind a one-permit head, if there is one).
      const seconds = secondsUntil(wait.deadline);
      const queued = await blockingStatement(context.connections, connection, wait, () => {
        const sent = connection.query<{ ok: number | null }[]>(
          'SELECT GET_LOCK(?, ?) = 1 AND GET_LOCK(?, ?) = 1 AS ok',
          [keys.gate, seconds, keys.queue, seconds],
        );
        wait.waiting(); // the gate statement is written: announce the wait only now
        return sent;
      });
      if (!queued.ok) failure = queued.error;
      else if (Number(queued.value[0]?.ok) === 1) {
        try {
          failure = await collect(context, connection, slots, permits, mine, wait);
        } catch (error) {
          failure = error;
        }
        if (failure === undefined && mine.size >= permits) {
          try {
            await connection.query('DO RELEASE_LOCK(?), RELEASE_LOCK(?)', [keys.gate, keys.queue]);
            return await countSlots(context, connection, request, keys, [...mine]);
          } catch (error) {
            failure = error;
          }
        }
      }
      await releaseEverything(connection);
      if (failure !== undefined && !wait.signal.aborted && !isInterrupted(failure)) {
        throw lockError(request.name, failure);
      }
    }
  },
};

/**
 * The head's loop: take free slots until it has `permits`, else block on one it lacks until
 * it is released, a releaser of another slot wakes the head (`KILL QUERY`, as for one-permit
 * heads: the statement starts with `SELECT IF(IS_FREE_LOCK(`), or the safety poll. Resolves
 * undefined when done (all slots, the deadline or abort) or the error to start over on.
 */
async function collect(
  context: AlgorithmContext,
  connection: LockConnection,
  slots: Slots,
  permits: number,
  mine: Set<number>,
  wait: Parameters<LockAlgorithm['wait']>[4],
): Promise<unknown> {
  for (;;) {
    if (wait.signal.aborted || now() >= wait.deadline) return undefined;
    await takeFree(connection, slots, permits - mine.size, mine);
    if (mine.size >= permits) return undefined;
    const lacking = Array.from({ length: slots.count }, (_, index) => index).filter(
      (index) => !mine.has(index),
    );
    const keys = lacking.map((index) => slots.key(index));
    const watched = lacking[Math.floor(Math.random() * lacking.length)] as number;
    const woken = await blockingStatement(context.connections, connection, wait, () =>
      connection.query<{ ok: number | null }[]>(
        `SELECT IF(${keys.map(() => 'IS_FREE_LOCK(?)').join(' OR ')}, -1, GET_LOCK(?, ?)) AS ok`,
        [...keys, slots.key(watched), secondsUntil(wait.deadline, context.safetyPollMs)],
      ),
    );
    if (!woken.ok) return woken.error; // interrupted: what the GET_LOCK did is unknown
    if (Number(woken.value[0]?.ok) === 1) mine.add(watched);
  }
}
