import { createHash } from 'node:crypto';
import pg from 'pg';

/** A statement prepared once per connection (named after a digest of its text). */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** A {@link Statement} of `text`. */
export function statement(text: string): Statement {
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return Object.freeze({ name: `lockkit_${digest}`, text });
}

/**
 * One try-lock plus the fencing token, in one round trip: `token` is NULL when the lock was
 * not granted. `nextval` runs only after the grant (CASE evaluates it last), so every
 * token is drawn while the lock is held. $1 = key (text → bigint), $2 = sequence.
 */
export const tryExclusive: Statement = statement(
  'SELECT CASE WHEN pg_try_advisory_lock($1::bigint) THEN nextval($2::regclass)::text END AS token',
);

/** {@link tryExclusive} for a reader (`_shared`). */
export const tryShared: Statement = statement(
  'SELECT CASE WHEN pg_try_advisory_lock_shared($1::bigint) THEN nextval($2::regclass)::text END AS token',
);

/**
 * One attempt at any free slot of a semaphore: walks slots `(start + i) mod maxCount`,
 * skipping those this connection already holds ($4: PostgreSQL would stack them), and stops
 * at the first `pg_try_advisory_lock` that succeeds. `generate_series` sits in a target list
 * (ProjectSet), so rows are produced one at a time: a semaphore of 2^31-1 permits costs what
 * the slots actually visited cost. Head of line: nothing is tried while another session holds
 * the semaphore's gate ($6, see {@link tryGate}): the transaction-level shared try on it is
 * an InitPlan, evaluated once, and ends with the statement. $1 = semaphore key, $2 =
 * maxCount, $3 = start, $4 = excluded slots, $5 = sequence, $6 = gate key. No row = no free
 * slot (or the gate is held).
 */
export const trySlot: Statement = statement(
  `SELECT free.slot::text AS slot, nextval($5::regclass)::text AS token FROM (
  SELECT slots.slot FROM (
    SELECT (series.i + $3::bigint) % $2::bigint AS slot
    FROM (SELECT generate_series(0::bigint, $2::bigint - 1) AS i) series
  ) slots
  WHERE CASE WHEN NOT (SELECT pg_try_advisory_xact_lock_shared($6::bigint)) THEN false
             WHEN slots.slot = ANY($4::bigint[]) THEN false
             ELSE pg_try_advisory_lock($1::bigint # slots.slot) END
  LIMIT 1
) free`,
);

/**
 * A weighted attempt, by the session that holds the semaphore's gate: tries free slots as
 * {@link trySlot} does until it has `$5` of them; `token` is drawn only when it got them all
 * (else the caller unlocks the `slots` it got with {@link unlockSlots}). $1 = semaphore key,
 * $2 = maxCount, $3 = start, $4 = excluded slots, $5 = permits, $6 = sequence.
 */
export const trySlots: Statement = statement(
  `SELECT CASE WHEN count(*) = $5::bigint THEN nextval($6::regclass)::text END AS token,
  coalesce(array_agg(free.slot::text), '{}') AS slots FROM (
  SELECT slots.slot FROM (
    SELECT (series.i + $3::bigint) % $2::bigint AS slot
    FROM (SELECT generate_series(0::bigint, $2::bigint - 1) AS i) series
  ) slots
  WHERE CASE WHEN slots.slot = ANY($4::bigint[]) THEN false
             ELSE pg_try_advisory_lock($1::bigint # slots.slot) END
  LIMIT $5::bigint
) free`,
);

/**
 * Unlocks several slots of a semaphore ($1 = semaphore key, $2 = slots) and wakes its
 * waiters ($3 = channel): `released` is true when every one was held by this session.
 */
export const unlockSlots: Statement = statement(
  `SELECT bool_and(pg_advisory_unlock($1::bigint # s)) AS released, pg_notify($3, '')::text AS notified
FROM unnest($2::bigint[]) s`,
);

/** The semaphore's gate, taken by a weighted request that has to wait (session-level). */
export const tryGate: Statement = statement('SELECT pg_try_advisory_lock($1::bigint) AS locked');

/** Gives the gate back and wakes the semaphore's waiters it held back. */
export const unlockGate: Statement = statement(
  "SELECT pg_advisory_unlock($1::bigint) AS released, pg_notify($2, '')::text AS notified",
);

/** Ownership-checked unlock (false + a WARNING when this session does not hold it). */
export const unlockExclusive: Statement = statement(
  'SELECT pg_advisory_unlock($1::bigint) AS released',
);

/** {@link unlockExclusive} for a reader. */
export const unlockShared: Statement = statement(
  'SELECT pg_advisory_unlock_shared($1::bigint) AS released',
);

/** Unlocks a semaphore slot and wakes the semaphore's waiters (delivered at commit). */
export const unlockSlot: Statement = statement(
  "SELECT pg_advisory_unlock($1::bigint) AS released, pg_notify($2, '')::text AS notified",
);

/** The keepalive: proves the session answers and is still the same backend. */
export const backendPid: Statement = statement('SELECT pg_backend_pid() AS pid');

/** Start of a session of our own: its pid, and no statement_timeout (waits set lock_timeout). */
export const startOwnSession: Statement = statement(
  "SELECT pg_backend_pid() AS pid, set_config('statement_timeout', '0', false) AS statement_timeout",
);

/**
 * A server-side wait on a session without statement_timeout, prepared: `lock_timeout` for
 * this statement only (`set_config(…, true)` ends with its implicit transaction; 0 = none),
 * then the blocking lock and the token. $1 = key, $2 = lock_timeout ms, $3 = sequence.
 */
export const waitExclusive: Statement = statement(
  "SELECT set_config('lock_timeout', $2, true) AS lock_timeout, pg_advisory_lock($1::bigint) AS locked, nextval($3::regclass)::text AS token",
);

/** {@link waitExclusive} for a reader. */
export const waitShared: Statement = statement(
  "SELECT set_config('lock_timeout', $2, true) AS lock_timeout, pg_advisory_lock_shared($1::bigint) AS locked, nextval($3::regclass)::text AS token",
);

/**
 * A server-side wait on a session whose statement_timeout we may not change (a pooled
 * client), as one simple-protocol string (its three
 * statements share an implicit transaction, so both SET LOCALs end with it and the
 * session's own settings are untouched): no statement_timeout, `lock_timeout` = the
 * caller's remaining time (0 = forever), then the blocking lock and the token.
 * Only numbers we produced ourselves and escaped literals are inlined; `around` may wrap
 * the last statement (the holds table's recording).
 */
export function waitStatement(
  key: bigint,
  shared: boolean,
  lockTimeoutMs: number,
  sequence: string,
  around: (select: string) => string = (select) => select,
): string {
  const lock = shared ? 'pg_advisory_lock_shared' : 'pg_advisory_lock';
  const select = `SELECT ${lock}('${key}'::bigint), nextval(${pg.escapeLiteral(sequence)}::regclass)::text AS token`;
  return (
    `SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = ${Math.trunc(lockTimeoutMs)}; ` +
    around(select)
  );
}
