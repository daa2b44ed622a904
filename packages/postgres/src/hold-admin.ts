import { BackendUnavailableError } from '@lockkit/core';
import {
  type BackendLockState,
  type LockHolder,
  type LockRequest,
  now,
} from '@lockkit/core/backend';
import { forgetGrant } from './advisory-attempts.js';
import type { RequestKey } from './advisory-keys.js';
import type { ConnectionMultiplexer } from './connection-multiplexer.js';
import type { FencingSequence } from './fencing-sequence.js';
import { decodeOwner, type HoldRecords } from './hold-records.js';
import type { LockConnection, LoseFunction } from './lock-connection.js';
import { describeError } from './pg-errors.js';
import type { PostgresGrant } from './postgres-grant.js';

/** One advisory lock request of the lock, as `pg_locks` (joined with the holds table) has it. */
interface HoldRow {
  readonly pid: number;
  readonly key: string;
  readonly mode: string;
  readonly granted: boolean;
  readonly token: string | null;
  readonly owner: string | null;
  readonly since: string | null;
  /** The hold's permits (its row's; 1 without a row). */
  readonly permits: number;
}

/** The advisory locks of this database, their key as one bigint. */
const advisoryLocks = `SELECT pid, mode, granted, ((classid::bigint << 32) | objid::bigint) AS key
  FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/** $1 = key (the semaphore's base key), $2 = maxCount, $3 = semaphore. */
const ofLock = (column: string): string =>
  `CASE WHEN $3::boolean THEN (${column} # $1::bigint) BETWEEN 0 AND $2::bigint - 1 ELSE ${column} = $1::bigint END`;

function readText(holds: HoldRecords): string {
  if (!holds.recording) {
    return `SELECT l.pid, l.mode, l.granted, l.key::text AS key, NULL AS token, NULL AS owner, NULL AS since, 1 AS permits
      FROM (${advisoryLocks}) l WHERE ${ofLock('l.key')}`;
  }
  return `SELECT l.pid, l.mode, l.granted, l.key::text AS key, h.token::text AS token, h.owner, h.since::text AS since,
      coalesce(h.permits, 1) AS permits
    FROM (${advisoryLocks}) l
    LEFT JOIN (SELECT DISTINCT ON (pid, key) pid, key, token, owner, since, permits FROM ${holds.table}
               WHERE ${ofLock('key')} ORDER BY pid, key, token DESC) h
      ON l.granted AND h.pid = l.pid AND h.key = l.key
    WHERE ${ofLock('l.key')}`;
}

/** Grants an operator broke: their release answers false, whatever the session says. */
const brokenGrants = new WeakSet<PostgresGrant>();

/** The `lose` of each monitored grant (the keepalive reports a broken hold through it). */
const losses = new WeakMap<PostgresGrant, LoseFunction>();

/** Watches a grant: its session's failure, and an operator's break of this one hold. */
export function monitorGrant(grant: PostgresGrant, lose: LoseFunction): () => void {
  losses.set(grant, lose);
  const stop = grant.connection.watchLoss(grant, lose);
  return () => {
    losses.delete(grant);
    stop();
  };
}

/** True when an operator broke this grant (it is being, or was, unlocked by the keepalive). */
export function isBroken(grant: PostgresGrant): boolean {
  return brokenGrants.has(grant);
}

/**
 * The keepalive found holds of `connection` marked broken (`tokens`): each is reported lost
 * at once, then unlocked (deleting its row; a semaphore's release also wakes its waiters).
 * Other holds on the session are untouched.
 */
export function breakHolds(
  connection: LockConnection,
  tokens: readonly string[],
  holds: HoldRecords,
): void {
  const wanted = new Set(tokens);
  for (const mark of [...connection.held.values()]) {
    if (typeof mark !== 'object') continue;
    const grant = mark as PostgresGrant;
    if (brokenGrants.has(grant) || !wanted.has(grant.fencingToken.toString())) continue;
    brokenGrants.add(grant);
    losses.get(grant)?.('an operator broke the lock (forceRelease)');
    void unlockBroken(connection, grant, holds);
  }
}

async function unlockBroken(
  connection: LockConnection,
  grant: PostgresGrant,
  holds: HoldRecords,
): Promise<void> {
  const unlock = holds.unlockGrant(grant);
  try {
    await connection.query(unlock.statement, unlock.values);
    forgetGrant(grant); // only now may the session take this key again
  } catch (error) {
    connection.fail(`unlocking a hold an operator broke failed: ${describeError(error)}`, error);
  }
}

/** Inspection and operator breaks of one backend. */
export class HoldAdmin {
  readonly #connections: ConnectionMultiplexer;
  readonly #sequence: FencingSequence;
  /** How long holders get to break their holds themselves before their sessions end. */
  readonly #graceMs: number;

  constructor(connections: ConnectionMultiplexer, sequence: FencingSequence, graceMs: number) {
    this.#connections = connections;
    this.#sequence = sequence;
    this.#graceMs = graceMs;
  }

  async inspect(request: LockRequest, key: RequestKey): Promise<BackendLockState> {
    const rows = await this.#withSession(request, 'Inspecting', (connection) =>
      this.#read(connection, request, key),
    );
    const holders = holdsOf(rows).map((row) => holderOf(request, row));
    const waiting =
      request.kind === 'semaphore' ? undefined : rows.filter((row) => !row.granted).length;
    return { holders, waiting };
  }

  /**
   * Marks every current hold's row broken (each holder's keepalive then unlocks it and
   * reports it lost), waits until the server shows them gone, and ends the sessions of
   * holds still there after the grace (holds without a row, holders that do not answer).
   */
  async forceRelease(request: LockRequest, key: RequestKey): Promise<number> {
    return this.#withSession(request, 'Breaking', async (connection) => {
      const holds = this.#sequence.holds;
      const found = (await this.#read(connection, request, key)).filter((row) => row.granted);
      if (found.length === 0) return 0;
      const count = holdsOf(found).length;
      const tokens = found.flatMap((row) => (row.token === null ? [] : [row.token]));
      if (holds.recording && tokens.length > 0) {
        await connection.text(`UPDATE ${holds.table} SET broken = true WHERE token = ANY($1)`, [
          tokens,
        ]);
      }
      let deadline = now() + this.#graceMs;
      let terminated = false;
      for (;;) {
        const current = await this.#read(connection, request, key);
        const still = current.filter((row) => row.granted && found.some((f) => same(f, row)));
        if (still.length === 0) break;
        if (now() >= deadline && terminated) {
          throw new BackendUnavailableError(
            `forceRelease of lock "${request.name}": ${still.length} hold(s) still there after their sessions were terminated`,
            { lockName: request.name },
          );
        }
        if (now() >= deadline) {
          terminated = true;
          deadline = now() + this.#graceMs;
          const pids = [...new Set(still.map((row) => row.pid))];
          await connection.text('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [
            pids,
          ]);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      if (holds.recording) {
        // Rows of sessions that ended without unlocking (never reported; tidied here).
        await connection.text(
          `DELETE FROM ${holds.table} h WHERE ${ofLock('h.key')} AND NOT EXISTS (
             SELECT 1 FROM (${advisoryLocks}) l WHERE l.granted AND l.pid = h.pid AND l.key = h.key)`,
          [key.text, request.maxCount, request.kind === 'semaphore'],
        );
      }
      return count;
    });
  }

  async #read(
    connection: LockConnection,
    request: LockRequest,
    key: RequestKey,
  ): Promise<HoldRow[]> {
    const result = await connection.text<HoldRow>(readText(this.#sequence.holds), [
      key.text,
      request.kind === 'semaphore' ? request.maxCount : 1,
      request.kind === 'semaphore',
    ]);
    return result.rows;
  }

  async #withSession<T>(
    request: LockRequest,
    doing: string,
    work: (connection: LockConnection) => Promise<T>,
  ): Promise<T> {
    const connection = (await this.#connections.forAttempt(undefined))!;
    try {
      if (!this.#sequence.confirmed) await this.#sequence.ensure(connection);
      return await work(connection);
    } catch (error) {
      if (BackendUnavailableError.isInstance(error)) throw error;
      throw new BackendUnavailableError(
        `${doing} lock "${request.name}" on PostgreSQL failed: ${describeError(error)}`,
        { lockName: request.name, cause: error },
      );
    } finally {
      connection.unclaim();
    }
  }
}

/**
 * The granted rows as holds: a weighted semaphore hold is one row (its first slot, with its
 * permit count n) and n - 1 more slot locks of the same session without a row; those are
 * folded into it. The other row-less locks are holds of their own.
 */
function holdsOf(rows: readonly HoldRow[]): HoldRow[] {
  const granted = rows.filter((row) => row.granted);
  const extra = new Map<number, number>(); // pid → slot locks its weighted holds account for
  for (const row of granted) {
    const permits = Number(row.permits);
    if (row.token !== null && permits > 1) {
      extra.set(row.pid, (extra.get(row.pid) ?? 0) + permits - 1);
    }
  }
  return granted.filter((row) => {
    if (row.token !== null) return true;
    const left = extra.get(row.pid) ?? 0;
    if (left === 0) return true;
    extra.set(row.pid, left - 1);
    return false;
  });
}

/** The same hold: its token, or (no row) the same session, key and mode. */
function same(a: HoldRow, b: HoldRow): boolean {
  if (a.token !== null) return a.token === b.token;
  return a.pid === b.pid && a.key === b.key && a.mode === b.mode;
}

function holderOf(request: LockRequest, row: HoldRow): LockHolder {
  const kind =
    request.kind === 'mutex' || request.kind === 'semaphore'
      ? request.kind
      : row.mode === 'ShareLock'
        ? 'read'
        : 'write';
  return {
    kind,
    fencingToken: row.token === null ? undefined : BigInt(row.token),
    permits: Number(row.permits),
    owner: decodeOwner(row.owner),
    since: row.since === null ? undefined : Number(row.since),
    validUntil: Number.POSITIVE_INFINITY,
  };
}
