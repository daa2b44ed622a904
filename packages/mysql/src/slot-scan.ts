import { now, type WaitContext } from '@lockkit/core/backend';
import type { AlgorithmContext } from './lock-algorithm.js';
import type { LockConnection } from './lock-connection.js';
import { isInterrupted } from './mysql-errors.js';
import { blockingStatement, secondsUntil } from './server-wait.js';

/** Slots probed per statement. */
const BATCH = 64;

/** A set of interchangeable `GET_LOCK` slots (semaphore permits, RW reader slots). */
export interface Slots {
  readonly count: number;
  key(index: number): string;
  /** Held by the head waiter (one per server) while it watches for a free slot. */
  readonly queue: string;
}

/** `CASE WHEN GET_LOCK(s_i, 0) = 1 THEN i … ELSE -1 END`: takes the first free slot. */
export function firstFreeExpression(
  slots: Slots,
  indexes: readonly number[],
): { sql: string; values: string[] } {
  let sql = 'CASE';
  const values: string[] = [];
  for (const index of indexes) {
    sql += ` WHEN GET_LOCK(?, 0) = 1 THEN ${index}`;
    values.push(slots.key(index));
  }
  return { sql: `${sql} ELSE -1 END`, values };
}

/** Indexes `[from, to)` whose keys the session does not hold already (no stacking). */
export function candidates(
  connection: LockConnection,
  slots: Slots,
  from: number,
  to: number,
): number[] {
  const indexes: number[] = [];
  for (let index = from; index < to; index++) {
    if (!connection.held.has(slots.key(index))) indexes.push(index);
  }
  return indexes;
}

/**
 * Takes the lowest free slot, scanning in ascending batches (none while `gate` is held). Because every taker takes the
 * lowest free slot it sees, held slots stay packed near 0 and a huge `count` costs nothing.
 */
export async function takeLowestFree(
  connection: LockConnection,
  slots: Slots,
  gate?: string,
): Promise<number | undefined> {
  let first = true;
  for (let from = 0; from < slots.count; from += BATCH) {
    const indexes = candidates(connection, slots, from, Math.min(slots.count, from + BATCH));
    if (indexes.length === 0) continue;
    const { sql, values } = firstFreeExpression(slots, indexes);
    // With `gate`: nothing is taken while it is held (a weighted semaphore request waits).
    const checked = gate !== undefined && first;
    first = false;
    const rows = await connection.query<{ slot: number | string }[]>(
      checked ? `SELECT IF(IS_FREE_LOCK(?), ${sql}, -2) AS slot` : `SELECT ${sql} AS slot`,
      checked ? [gate, ...values] : values,
    );
    const slot = Number(rows[0]?.slot);
    if (slot >= 0) return slot;
    if (slot === -2) return undefined;
  }
  return undefined;
}

/**
 * The head waiter's loop, on a waiting session: hold the queue lock (waiters queue on it
 * server-side), take a free slot, or block on one held slot until it is released or a
 * releaser of another slot wakes it with `KILL QUERY ID` (release statements look up the
 * queue holder's current statement), with `safetyPollMs` as the longest block.
 * Returns the slot (queue released); undefined at the deadline, on abort, or when a wake-up
 * interrupted a statement whose effect is unknown (the caller releases everything the
 * session holds and, if there is time left, calls again); or the error of a failed statement.
 */
export async function waitForSlot(
  context: AlgorithmContext,
  connection: LockConnection,
  slots: Slots,
  wait: WaitContext,
): Promise<{ slot: number } | { error: unknown } | undefined> {
  const queued = await blockingStatement(context.connections, connection, wait, () =>
    connection.query<{ ok: number | null }[]>('SELECT GET_LOCK(?, ?) AS ok', [
      slots.queue,
      secondsUntil(wait.deadline),
    ]),
  );
  if (!queued.ok) return { error: queued.error };
  if (Number(queued.value[0]?.ok) !== 1) return undefined;
  for (;;) {
    if (wait.signal.aborted || now() >= wait.deadline) return undefined;
    let slot: number | undefined;
    try {
      slot = await takeLowestFree(connection, slots);
    } catch (error) {
      // A wake-up KILL hit the scan: what it took is unknown; start over clean.
      return isInterrupted(error) ? undefined : { error };
    }
    if (slot !== undefined) return leaveQueue(connection, slots, slot);
    // Every slot was taken: block on one of them (a random one) until it is released, a
    // releaser of another slot wakes us (KILL QUERY ID of exactly this statement, which starts
    // with WAKE_STATEMENT_PREFIX), or the safety poll. `-1`: one was freed meanwhile.
    const anyFree = Array.from({ length: slots.count }, () => 'IS_FREE_LOCK(?)').join(' OR ');
    const keys = Array.from({ length: slots.count }, (_, index) => slots.key(index));
    const watched = Math.floor(Math.random() * slots.count);
    const woken = await blockingStatement(context.connections, connection, wait, () =>
      connection.query<{ ok: number | null }[]>(`SELECT IF(${anyFree}, -1, GET_LOCK(?, ?)) AS ok`, [
        ...keys,
        slots.key(watched),
        secondsUntil(wait.deadline, context.safetyPollMs),
      ]),
    );
    if (!woken.ok) {
      // Interrupted: the GET_LOCK may have been granted as the wake-up landed; start over.
      return isInterrupted(woken.error) ? undefined : { error: woken.error };
    }
    if (Number(woken.value[0]?.ok) === 1) return leaveQueue(connection, slots, watched);
  }
}

/** Lets the next head in; keeps `slot`. */
async function leaveQueue(
  connection: LockConnection,
  slots: Slots,
  slot: number,
): Promise<{ slot: number } | { error: unknown } | undefined> {
  try {
    await connection.query('DO RELEASE_LOCK(?)', [slots.queue]);
    return { slot };
  } catch (error) {
    // A late wake-up interrupted it: the caller's cleanup frees both; start over.
    return isInterrupted(error) ? undefined : { error };
  }
}
