import { now } from '@lockkit/core/backend';
import type { AlgorithmContext, Held, LockAlgorithm } from './lock-algorithm.js';
import { releaseEverything } from './lock-algorithm.js';
import type { LockConnection } from './lock-connection.js';
import type { LockKeys } from './lock-keys.js';
import { isInterrupted, lockError } from './mysql-errors.js';
import { type Slots, takeLowestFree, waitForSlot } from './slot-scan.js';

function permits(keys: LockKeys, maxCount: number): Slots {
  return { count: maxCount, key: keys.slot, queue: keys.queue };
}

/** After a slot is taken: the token; on failure the slot is given back. */
export async function countSlot(
  context: AlgorithmContext,
  connection: LockConnection,
  name: string,
  base: string,
  key: string,
  wake: string,
): Promise<Held> {
  for (let attempt = 0; ; attempt++) {
    try {
      return { key, token: await context.fencing.next(connection, base), wake };
    } catch (error) {
      // A stray wake-up may interrupt the counter; it is safe to bump again (tokens may skip).
      if (isInterrupted(error) && attempt < 3) continue;
      await connection.query('DO RELEASE_LOCK(?)', [key]).catch(() => undefined);
      throw lockError(name, error);
    }
  }
}

/**
 * Semaphore: `maxCount` permit locks `<base>.s<i>`; a holder holds the lowest free one.
 * Waiters queue server-side on `<base>.q`; its holder (the head) takes the next free permit
 * or sleeps until a releaser, which reads `IS_USED_LOCK(<base>.q)` in its release statement,
 * wakes it with `KILL QUERY`. An attempt takes nothing while a waiting weighted request
 * holds the gate `<base>.w` (see weighted-algorithm.ts).
 */
export const semaphoreAlgorithm: LockAlgorithm = {
  waitsInOneStatement: false, // queue lock, permit scan, queue release
  conflicts: () => [],

  async attempt(context, connection, request, keys) {
    let slot: number | undefined;
    try {
      slot = await takeLowestFree(connection, permits(keys, request.maxCount), keys.gate);
    } catch (error) {
      throw lockError(request.name, error);
    }
    if (slot === undefined) return undefined;
    return countSlot(context, connection, request.name, keys.base, keys.slot(slot), keys.queue);
  },

  async wait(context, connection, request, keys, wait) {
    for (;;) {
      if (wait.signal.aborted || now() >= wait.deadline) return undefined;
      const result = await waitForSlot(context, connection, permits(keys, request.maxCount), wait);
      if (result && 'slot' in result) {
        return countSlot(
          context,
          connection,
          request.name,
          keys.base,
          keys.slot(result.slot),
          keys.queue,
        );
      }
      await releaseEverything(connection);
      if (result && !wait.signal.aborted && !isInterrupted(result.error)) {
        throw lockError(request.name, result.error);
      }
    }
  },
};
