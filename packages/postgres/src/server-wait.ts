import { BackendUnavailableError, LockDeadlockError } from '@lockkit/core';
import { type LockRequest, now, type WaitContext } from '@lockkit/core/backend';
import type pg from 'pg';
import { unlockExclusive, unlockShared, waitStatement } from './advisory-sql.js';
import { cancellableQuery } from './cancellable-query.js';
import type { ConnectionMultiplexer } from './connection-multiplexer.js';
import type { FencingSequence } from './fencing-sequence.js';
import type { LockConnection } from './lock-connection.js';
import { describeError, sqlState, sqlStateOf } from './pg-errors.js';
import type { PostgresGrant } from './postgres-grant.js';

/**
 * Waits for `key` server-side: `pg_advisory_lock[_shared]` on a session of its own, with
 * `lock_timeout` = the caller's remaining time. When the caller gives up (abort, its own
 * deadline, provider close) the wait is cancelled with protocol cancel requests until it
 * ends; whenever it did not end in a grant, a try-unlock follows, because a grant can race
 * the timeout or the cancel (the server may report 55P03/57014 for a lock it granted).
 * Returns the grant (also one that lands after an abort: core releases it), or null when
 * the wait timed out or was cancelled.
 */
export async function waitOnServer(
  connections: ConnectionMultiplexer,
  sequence: FencingSequence,
  request: LockRequest,
  key: string,
  shared: boolean,
  wait: WaitContext,
): Promise<PostgresGrant | null> {
  const connection = await connections.forWait(wait.signal, key);
  if (!connection) return null;
  try {
    if (!sequence.confirmed) await sequence.ensure(connection);
    const finite = wait.deadline !== Number.POSITIVE_INFINITY;
    const remaining = finite ? Math.ceil(wait.deadline - now()) : 0; // 0 = no lock_timeout
    if (finite && remaining <= 0) return null;
    if (wait.signal.aborted) return null;
    const { holds } = sequence;
    const bound = holds.waitLock(shared, key, String(remaining), sequence.name, request.owner);
    const waiting = connection.untimed
      ? connection
          .query<{ token: string }>(bound.statement, bound.values)
          .then((result) => result.rows[0]!.token)
      : connection
          .text(
            waitStatement(BigInt(key), shared, remaining, sequence.name, (select) =>
              holds.recordInline(select, BigInt(key), request.owner),
            ),
          )
          .then((results) => tokenOf(results));
    const outcome = await cancellableQuery(
      connection.client,
      waiting,
      wait.signal,
      () => connection.fail('the wait could not be cancelled'),
      connections.connectTimeoutMs,
      wait.deadline,
    );
    if (outcome.ok) {
      const grant: PostgresGrant = {
        connection,
        key,
        shared,
        semaphore: undefined,
        fencingToken: BigInt(outcome.value),
      };
      connection.mark(key, grant);
      return grant;
    }
    await undoRacingGrant(connection, key, shared);
    const state = sqlStateOf(outcome.error);
    if (state === sqlState.lockNotAvailable || state === sqlState.queryCanceled) return null;
    if (state === sqlState.deadlockDetected)
      throw new LockDeadlockError(request.name, outcome.error);
    throw new BackendUnavailableError(
      `Waiting for lock "${request.name}" failed: ${describeError(outcome.error)}`,
      { lockName: request.name, cause: outcome.error },
    );
  } finally {
    connections.endWait(connection, key);
  }
}

/**
 * After a wait that did not return a grant: unlock in case the server granted it anyway.
 * A session whose state cannot be made certain is destroyed (the server then frees all).
 */
async function undoRacingGrant(
  connection: LockConnection,
  key: string,
  shared: boolean,
): Promise<void> {
  if (!connection.usable) return;
  const unlock = shared ? unlockShared : unlockExclusive;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await connection.query(unlock, [key]);
      return;
    } catch (error) {
      if (sqlStateOf(error) !== sqlState.queryCanceled || !connection.usable) break;
    }
  }
  connection.fail('could not make sure a cancelled wait left no lock behind');
}

/** The token column of the last statement of a multi-statement result. */
export function tokenOf(results: unknown): string {
  const all = results as pg.QueryResult<{ token: string }>[];
  return all[all.length - 1]!.rows[0]!.token;
}
