/**
 * The whole algorithm on the server: one table of holds (and waiting-writer markers) with an
 * expiry each, one sequence for fencing tokens, and one function that decides an attempt
 * atomically under a per-key transaction lock. Releases notify the channel with the key.
 */

/** The LISTEN/NOTIFY channel; the payload is the lock's key. */
export const channel = 'lockkit_lease';

/** The mode a row records. `waiting` marks a writer that waits (readers stay out). */
export type Mode = 'mutex' | 'read' | 'write' | 'semaphore' | 'waiting';

/**
 * Idempotent schema. Run under a transaction-level advisory lock so that providers starting
 * together do not race on `CREATE … IF NOT EXISTS` (which is not atomic in PostgreSQL).
 */
export const schemaSql: string = `
BEGIN;
SELECT pg_advisory_xact_lock(7460010001);
CREATE TABLE IF NOT EXISTS lockkit_lease (
  key text NOT NULL,
  owner text NOT NULL,
  mode text NOT NULL,
  fencing_token bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, owner)
);
CREATE SEQUENCE IF NOT EXISTS lockkit_lease_fence;
CREATE OR REPLACE FUNCTION lockkit_lease_acquire(
  p_key text, p_owner text, p_mode text, p_max integer, p_lease_ms integer,
  p_waiter text, p_waiting_ms integer
) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  holders integer;
  writers integer;
  others_waiting integer;
  token bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_key, 0));
  DELETE FROM lockkit_lease WHERE key = p_key AND expires_at <= clock_timestamp();
  SELECT count(*) FILTER (WHERE mode <> 'waiting'),
         count(*) FILTER (WHERE mode = 'write'),
         count(*) FILTER (WHERE mode = 'waiting' AND owner IS DISTINCT FROM p_waiter)
    INTO holders, writers, others_waiting
    FROM lockkit_lease WHERE key = p_key;
  IF (p_mode = 'read' AND writers = 0 AND others_waiting = 0)
     OR (p_mode <> 'read' AND holders < p_max) THEN
    token := nextval('lockkit_lease_fence');
    DELETE FROM lockkit_lease WHERE key = p_key AND owner = p_waiter;
    INSERT INTO lockkit_lease VALUES
      (p_key, p_owner, p_mode, token, clock_timestamp() + p_lease_ms * interval '1 millisecond');
    RETURN token;
  END IF;
  IF p_waiter IS NOT NULL THEN
    INSERT INTO lockkit_lease VALUES
      (p_key, p_waiter, 'waiting', 0, clock_timestamp() + p_waiting_ms * interval '1 millisecond')
    ON CONFLICT (key, owner) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  END IF;
  RETURN NULL;
END
$fn$;
COMMIT;
`;

/** $1 key, $2 owner, $3 mode, $4 max holders, $5 lease ms, $6 waiter id or null, $7 its ttl. */
export const acquireSql = 'SELECT lockkit_lease_acquire($1, $2, $3, $4, $5, $6, $7) AS token';

/**
 * Deletes our row (a hold or a waiting marker) and notifies waiters. `live` says whether the
 * hold was still within its lease; no row means it was no longer ours.
 */
export const releaseSql: string = `
WITH gone AS (
  DELETE FROM lockkit_lease WHERE key = $1 AND owner = $2
  RETURNING expires_at > clock_timestamp() AS live
)
SELECT live, pg_notify('${channel}', $1) FROM gone`;

/** Pushes our lease out by $3 ms if the row is still ours and still within its lease. */
export const extendSql: string = `
UPDATE lockkit_lease SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
WHERE key = $1 AND owner = $2 AND expires_at > clock_timestamp()
RETURNING 1`;
