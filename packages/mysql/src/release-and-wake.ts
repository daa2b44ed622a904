import type { LockConnection } from './lock-connection.js';
import { isInterrupted } from './mysql-errors.js';

/** The head waiter's blocking statement starts with this (see slot-scan.ts). */
const WAKE_STATEMENT_PREFIX = 'SELECT IF(IS_FREE_LOCK(';

/**
 * `RELEASE_LOCK(key)` on the session that holds it, in one statement; with `wake` (a queue
 * lock), the same statement reads `IS_USED_LOCK(wake)`, and a head waiter found there is
 * woken. A `KILL QUERY` that interrupted the release (MySQL's wake-up can stray) is resolved
 * by asking the session what it still holds. Resolves whether the lock was still held.
 */
export async function releaseAndWake(
  connection: LockConnection,
  key: string,
  wake: string | undefined,
  more: readonly string[] = [],
): Promise<boolean> {
  if (more.length > 0 && wake !== undefined)
    return releaseSeveral(connection, [key, ...more], wake);
  for (let attempt = 0; ; attempt++) {
    try {
      if (wake === undefined) {
        // Mutex and writer: the answer is an OK packet whose row count says whether the lock
        // was ours (no result set to describe and parse: the cheapest exact release).
        const ok = await connection.execute<{ affectedRows: number }>(
          'SELECT 1 INTO @lockkit_released FROM DUAL WHERE RELEASE_LOCK(?) = 1',
          [key],
        );
        return ok.affectedRows === 1;
      }
      const rows = await connection.query<{ released: number | null; head: number | null }[]>(
        'SELECT RELEASE_LOCK(?) AS released, IS_USED_LOCK(?) AS head',
        [key, wake],
      );
      const head = rows[0]?.head;
      if (head != null) await wakeHead(connection, Number(head), key);
      return Number(rows[0]?.released) === 1;
    } catch (error) {
      if (!isInterrupted(error) || attempt >= 3) throw error;
      // The session is alive, so only that statement can have let go of the key.
      const rows = await connection.query<{ mine: number | null }[]>(
        'SELECT IS_USED_LOCK(?) = CONNECTION_ID() AS mine',
        [key],
      );
      if (Number(rows[0]?.mine) !== 1) return true;
    }
  }
}

/**
 * A weighted semaphore grant: every permit lock in one statement, then the head waiter is
 * woken as for one permit. Resolves true when every one was still held. An interrupted
 * statement is resolved by asking what the session still holds, and released again.
 */
async function releaseSeveral(
  connection: LockConnection,
  keys: readonly string[],
  wake: string,
): Promise<boolean> {
  let left = keys;
  for (let attempt = 0; ; attempt++) {
    try {
      const sum = left.map(() => 'IFNULL(RELEASE_LOCK(?), 0)').join(' + ');
      const rows = await connection.query<{ released: number | string; head: number | null }[]>(
        `SELECT ${sum} AS released, IS_USED_LOCK(?) AS head`,
        [...left, wake],
      );
      const head = rows[0]?.head;
      if (head != null) await wakeHead(connection, Number(head), left[0] as string);
      return Number(rows[0]?.released) === left.length;
    } catch (error) {
      if (!isInterrupted(error) || attempt >= 3) throw error;
      const checks = left.map((_, index) => `IS_USED_LOCK(?) = CONNECTION_ID() AS m${index}`);
      const rows = await connection.query<Record<string, number | null>[]>(
        `SELECT ${checks.join(', ')}`,
        [...left],
      );
      const still = left.filter((_, index) => Number(rows[0]?.[`m${index}`]) === 1);
      if (still.length === 0) return true;
      left = still;
    }
  }
}

/**
 * Ends the blocking statement of session `head`, unless it waits for the very key just
 * released (then the release itself wakes it). MariaDB names the statement by `QUERY_ID`, so
 * `KILL QUERY ID` can only ever hit that statement; MySQL kills by session id. Asked only when
 * the queue has a holder (PROCESSLIST is not cheap). A refusal (another user, the statement
 * is over) only delays the head until its safety poll.
 */
async function wakeHead(connection: LockConnection, head: number, released: string): Promise<void> {
  const column = connection.mariadb ? 'QUERY_ID' : 'ID';
  try {
    const rows = await connection.query<{ target: number | string }[]>(
      `SELECT ${column} AS target FROM information_schema.PROCESSLIST WHERE ID = ? ` +
        `AND INFO LIKE '${WAKE_STATEMENT_PREFIX}%' AND INFO NOT LIKE CONCAT('%GET_LOCK(''', ?, '''%')`,
      [head, released],
    );
    if (rows[0] === undefined) return;
    const target = Number(rows[0].target);
    await connection.query(connection.mariadb ? `KILL QUERY ID ${target}` : `KILL QUERY ${target}`);
  } catch {
    // Woken at its safety poll instead.
  }
}
