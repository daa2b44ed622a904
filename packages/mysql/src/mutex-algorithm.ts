import { now } from '@lockkit/core/backend';
import { type LockAlgorithm, releaseEverything } from './lock-algorithm.js';
import { isInterrupted, lockError } from './mysql-errors.js';
import { blockingStatement, secondsUntil } from './server-wait.js';

/**
 * Mutex: `GET_LOCK(key, timeout)`, with the fencing counter bumped in the same statement
 * (`INSERT … SELECT … WHERE GET_LOCK(…) = 1`), so a grant costs one round trip and its token
 * is ordered exactly like the grants. Release: `RELEASE_LOCK(key)`.
 */
export const mutexAlgorithm: LockAlgorithm = {
  waitsInOneStatement: true,
  conflicts: (keys) => [keys.base],

  async attempt(context, connection, request, keys) {
    try {
      const token = await context.fencing.acquireAndCount(
        connection,
        keys.base,
        'GET_LOCK(?, 0)',
        [keys.base],
        'try',
      );
      return token === undefined ? undefined : { key: keys.base, token };
    } catch (error) {
      // The GET_LOCK may have run before the statement failed; the session did not hold the
      // key before (conflicts), so this releases only what the failed statement took.
      await connection.query('DO RELEASE_LOCK(?)', [keys.base]).catch(() => undefined);
      throw lockError(request.name, error);
    }
  },

  async wait(context, connection, request, keys, wait) {
    for (;;) {
      if (wait.signal.aborted) return undefined;
      const outcome = await blockingStatement(context.connections, connection, wait, () =>
        context.fencing.acquireAndCount(
          connection,
          keys.base,
          'GET_LOCK(?, ?)',
          [keys.base, secondsUntil(wait.deadline)],
          'wait',
        ),
      );
      if (outcome.ok && outcome.value !== undefined) {
        return { key: keys.base, token: outcome.value };
      }
      if (!outcome.ok || wait.signal.aborted) await releaseEverything(connection);
      if (!outcome.ok && !isInterrupted(outcome.error) && !wait.signal.aborted) {
        throw lockError(request.name, outcome.error);
      }
      if (wait.signal.aborted || now() >= wait.deadline) return undefined;
    }
  },
};
