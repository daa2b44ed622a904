import { now } from '@lockkit/core/backend';
import { type LockAlgorithm, releaseEverything } from './lock-algorithm.js';
import type { LockKeys } from './lock-keys.js';
import { isInterrupted, lockError } from './mysql-errors.js';
import { countSlot } from './semaphore-algorithm.js';
import { blockingStatement, secondsUntil } from './server-wait.js';
import {
  candidates,
  firstFreeExpression,
  type Slots,
  takeLowestFree,
  waitForSlot,
} from './slot-scan.js';

function readerSlots(keys: LockKeys, maxReaders: number): Slots {
  return { count: maxReaders, key: keys.slot, queue: keys.queue };
}

function allSlots(keys: LockKeys, maxReaders: number): string[] {
  return Array.from({ length: maxReaders }, (_, index) => keys.slot(index));
}

/**
 * RW lock, reader: pass the gate `<base>.w` (held by a writer, waiting or not), take the
 * lowest free reader slot `<base>.r<i>`, let go of the gate. Uncontended, all of it is one
 * statement. Readers hold only their slot; more than `maxReaders` readers wait for a slot
 * like semaphore waiters (queue `<base>.q`).
 */
export const readAlgorithm: LockAlgorithm = {
  waitsInOneStatement: false, // gate, slot scan, gate release
  conflicts: (keys) => [keys.gate],

  async attempt(context, connection, request, keys) {
    const slots = readerSlots(keys, context.maxReaders);
    const indexes = candidates(connection, slots, 0, slots.count);
    if (indexes.length === 0) return undefined; // this very session holds every slot
    const scan = firstFreeExpression(slots, indexes);
    let slot: number;
    try {
      const rows = await connection.query<{ slot: number | string }[]>(
        `SELECT IF(GET_LOCK(?, 0) = 1, (${scan.sql}) + 0 * IFNULL(RELEASE_LOCK(?), 0), -2) AS slot`,
        [keys.gate, ...scan.values, keys.gate],
      );
      slot = Number(rows[0]?.slot);
    } catch (error) {
      // Give back whatever the failed statement may have taken (none of it was held before).
      const taken = [keys.gate, ...scan.values];
      await connection
        .query(`DO ${taken.map(() => 'RELEASE_LOCK(?)').join(', ')}`, taken)
        .catch(() => undefined);
      throw lockError(request.name, error);
    }
    if (!(slot >= 0)) return undefined;
    return countSlot(context, connection, request.name, keys.base, keys.slot(slot), keys.queue);
  },

  async wait(context, connection, request, keys, wait) {
    const slots = readerSlots(keys, context.maxReaders);
    for (;;) {
      if (wait.signal.aborted || now() >= wait.deadline) return undefined;
      const gate = await blockingStatement(context.connections, connection, wait, () =>
        connection.query<{ ok: number | null }[]>('SELECT GET_LOCK(?, ?) AS ok', [
          keys.gate,
          secondsUntil(wait.deadline),
        ]),
      );
      let failure: unknown;
      let slot: number | undefined;
      if (!gate.ok) failure = gate.error;
      else if (Number(gate.value[0]?.ok) === 1) {
        try {
          slot = await takeLowestFree(connection, slots);
          if (slot === undefined) {
            const result = await waitForSlot(context, connection, slots, wait);
            if (result && 'slot' in result) slot = result.slot;
            else failure = result?.error;
          }
          if (slot !== undefined) await connection.query('DO RELEASE_LOCK(?)', [keys.gate]);
        } catch (error) {
          failure = error;
          slot = undefined;
        }
      }
      if (slot !== undefined) {
        return countSlot(context, connection, request.name, keys.base, keys.slot(slot), keys.queue);
      }
      await releaseEverything(connection);
      if (failure !== undefined && !wait.signal.aborted && !isInterrupted(failure)) {
        throw lockError(request.name, failure);
      }
    }
  },
};

/**
 * RW lock, writer: take the gate (new readers and writers now wait on it: writer
 * preference), then wait for every reader slot to drain (`GET_LOCK(r_i) AND RELEASE_LOCK(r_i)`
 * for each slot). The writer holds only the gate. Gate, drain and token: one statement.
 */
export const writeAlgorithm: LockAlgorithm = {
  waitsInOneStatement: false, // one statement, but it drains every reader slot
  conflicts: (keys) => [keys.gate],

  async attempt(context, connection, request, keys) {
    const slots = allSlots(keys, context.maxReaders);
    const allFree = slots.map(() => 'IS_FREE_LOCK(?)').join(' AND ');
    try {
      const token = await context.fencing.acquireAndCount(
        connection,
        keys.base,
        `IF(GET_LOCK(?, 0) = 1, IF(${allFree}, 1, IFNULL(RELEASE_LOCK(?), 0) - 1), 0)`,
        [keys.gate, ...slots, keys.gate],
        'try',
      );
      return token === undefined ? undefined : { key: keys.gate, token };
    } catch (error) {
      await connection.query('DO RELEASE_LOCK(?)', [keys.gate]).catch(() => undefined);
      throw lockError(request.name, error);
    }
  },

  async wait(context, connection, request, keys, wait) {
    const slots = allSlots(keys, context.maxReaders);
    const drain = slots.map(() => 'GET_LOCK(?, ?) = 1 AND RELEASE_LOCK(?) = 1').join(' AND ');
    for (;;) {
      if (wait.signal.aborted) return undefined;
      const seconds = secondsUntil(wait.deadline);
      const outcome = await blockingStatement(context.connections, connection, wait, () =>
        context.fencing.acquireAndCount(
          connection,
          keys.base,
          `GET_LOCK(?, ?) = 1 AND ${drain}`,
          [keys.gate, seconds, ...slots.flatMap((slot) => [slot, seconds, slot])],
          'wait',
        ),
      );
      if (outcome.ok && outcome.value !== undefined)
        return { key: keys.gate, token: outcome.value };
      await releaseEverything(connection);
      if (!outcome.ok && !isInterrupted(outcome.error) && !wait.signal.aborted) {
        throw lockError(request.name, outcome.error);
      }
      if (wait.signal.aborted || now() >= wait.deadline) return undefined;
    }
  },
};
