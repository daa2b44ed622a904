import { randomInt } from 'node:crypto';
import { BackendUnavailableError } from '@lockkit/core';
import type { LockRequest } from '@lockkit/core/backend';
import { gateKey, type RequestKey, slotKey } from './advisory-keys.js';
import { unlockExclusive, unlockShared } from './advisory-sql.js';
import type { ConnectionMultiplexer } from './connection-multiplexer.js';
import type { FencingSequence } from './fencing-sequence.js';
import type { LockConnection } from './lock-connection.js';
import { describeError } from './pg-errors.js';
import type { PostgresGrant } from './postgres-grant.js';

/**
 * One try-lock (and its token) on a shared session that does not hold `key`. A statement
 * that failed may still have taken the lock (the try ran, `nextval` failed), so a failure
 * is followed by a try-unlock. Resolves null without I/O for an exclusive lock this process
 * already holds, tries or waits for.
 */
export async function attemptLock(
  connections: ConnectionMultiplexer,
  sequence: FencingSequence,
  request: LockRequest,
  key: string,
  shared: boolean,
): Promise<PostgresGrant | null> {
  // An exclusive lock this process holds, tries or waits for cannot be had at once.
  if (!shared && connections.busyWith(key)) return null;
  const connection = await connections.forAttempt(key, !shared); // `key` is marked pending
  if (!connection) return null;
  try {
    if (!sequence.confirmed) await sequence.ensure(connection);
    const attempt = sequence.holds.tryLock(shared, key, sequence.name, request.owner);
    const result = await connection.query<{ token: string | null }>(
      attempt.statement,
      attempt.values,
    );
    const token = result.rows[0]?.token;
    if (token == null) {
      connection.mark(key, undefined);
      return null;
    }
    const grant: PostgresGrant = {
      connection,
      key,
      shared,
      semaphore: undefined,
      fencingToken: BigInt(token),
    };
    connection.mark(key, grant);
    return grant;
  } catch (error) {
    if (connection.usable) {
      await connection.query(shared ? unlockShared : unlockExclusive, [key]).then(
        () => connection.mark(key, undefined),
        (undoError: unknown) => connection.fail('could not undo a failed attempt', undoError),
      );
    }
    throw unavailable(request, error);
  }
}

/**
 * One attempt at any free slot of a semaphore, on any shared session (attempts of the same
 * semaphore on one session run one after another, so each skips the slots the session
 * already holds). A failed statement may have taken a slot we cannot name: the session's
 * advisory locks are then compared with what it should hold, and strays are unlocked.
 */
export async function attemptSlot(
  connections: ConnectionMultiplexer,
  sequence: FencingSequence,
  request: LockRequest,
  semaphore: RequestKey,
): Promise<PostgresGrant | null> {
  const base = semaphore.key;
  const semaphoreKey = semaphore.text;
  const gate = gateKey(base).toString();
  // A weighted request of this process holds (or tries for) the gate: do not pass it.
  if (connections.busyWith(gate)) return null;
  const connection = (await connections.forAttempt(undefined))!; // claimed
  try {
    return await connection.turns.run(semaphoreKey, async () => {
      if (!sequence.confirmed) await sequence.ensure(connection);
      const mine = connection.slots.get(semaphoreKey);
      if ((mine?.size ?? 0) >= request.maxCount) return null;
      try {
        const attempt = sequence.holds.trySlot(
          [
            semaphoreKey,
            request.maxCount,
            randomInt(Math.min(request.maxCount, 2 ** 31 - 1)),
            [...(mine ?? [])],
            sequence.name,
            gate,
          ],
          request.owner,
        );
        const result = await connection.query<{ slot: string; token: string }>(
          attempt.statement,
          attempt.values,
        );
        const row = result.rows[0];
        if (!row) return null;
        const slot = Number(row.slot);
        const grant: PostgresGrant = {
          connection,
          key: slotKey(base, slot).toString(),
          shared: false,
          semaphore: { key: semaphoreKey, slot, slots: [slot], channel: semaphore.channel },
          fencingToken: BigInt(row.token),
        };
        holdSlot(connection, grant);
        return grant;
      } catch (error) {
        if (connection.usable) await sweepStraySlots(connection, base, request.maxCount);
        throw unavailable(request, error);
      }
    });
  } finally {
    connection.unclaim();
  }
}

/** Records a semaphore grant's permits on its session. */
export function holdSlot(connection: LockConnection, grant: PostgresGrant): void {
  const { semaphore } = grant;
  if (!semaphore) return;
  let slots = connection.slots.get(semaphore.key);
  if (!slots) {
    slots = new Set();
    connection.slots.set(semaphore.key, slots);
  }
  const base = BigInt(semaphore.key);
  for (const slot of semaphore.slots) {
    slots.add(slot);
    connection.mark(slotKey(base, slot).toString(), grant);
  }
}

/** Forgets a grant on its session (after its unlock, or when it is known gone). */
export function forgetGrant(grant: PostgresGrant): void {
  const { connection, semaphore } = grant;
  if (semaphore) {
    const slots = connection.slots.get(semaphore.key);
    const base = BigInt(semaphore.key);
    for (const slot of semaphore.slots) {
      slots?.delete(slot);
      const key = slotKey(base, slot).toString();
      if (connection.held.get(key) === grant) connection.mark(key, undefined);
    }
    if (slots?.size === 0) connection.slots.delete(semaphore.key);
  }
  if (connection.held.get(grant.key) === grant) connection.mark(grant.key, undefined);
}

/**
 * Unlocks slots of one semaphore that the session holds but no grant accounts for (or drops
 * the session). Only this semaphore's slots: attempts for other keys may be in flight.
 */
export async function sweepStraySlots(
  connection: LockConnection,
  base: bigint,
  maxCount: number,
): Promise<void> {
  try {
    const result = await connection.text<{ key: string }>(
      `SELECT ((classid::bigint << 32) | objid::bigint)::text AS key
       FROM pg_locks
       WHERE locktype = 'advisory' AND objsubid = 1 AND granted AND pid = pg_backend_pid()
         AND mode = 'ExclusiveLock'`,
      [],
    );
    for (const { key } of result.rows) {
      const slot = BigInt(key) ^ base;
      if (slot >= 0n && slot < BigInt(maxCount) && !connection.held.has(key)) {
        await connection.query(unlockExclusive, [key]);
      }
    }
  } catch (error) {
    connection.fail('could not undo a failed semaphore attempt', error);
  }
}

export function unavailable(request: LockRequest, error: unknown): BackendUnavailableError {
  if (BackendUnavailableError.isInstance(error)) return error;
  return new BackendUnavailableError(
    `Acquiring lock "${request.name}" failed: ${describeError(error)}`,
    { lockName: request.name, cause: error },
  );
}
