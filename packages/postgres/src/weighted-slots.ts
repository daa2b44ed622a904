import { randomInt } from 'node:crypto';
import type { LockRequest, WaitContext } from '@lockkit/core/backend';
import { holdSlot, sweepStraySlots, unavailable } from './advisory-attempts.js';
import { gateKey, type RequestKey, slotKey } from './advisory-keys.js';
import { tryGate, unlockGate, unlockSlots } from './advisory-sql.js';
import type { ConnectionMultiplexer } from './connection-multiplexer.js';
import type { FencingSequence } from './fencing-sequence.js';
import type { LockConnection } from './lock-connection.js';
import type { PostgresGrant } from './postgres-grant.js';

/** A weighted request's hold of a semaphore's gate. */
interface GateHold {
  readonly connection: LockConnection;
  readonly key: string;
  readonly channel: string;
}

/**
 * Weighted semaphore requests (`permits` > 1). Head of line: a weighted attempt first takes
 * the semaphore's gate (a session-level advisory lock, `gateKey`), then tries for all its
 * slots at once on the session holding it; one-permit attempts are refused while another
 * session holds the gate (see `trySlot`). A request that did not get its slots and will wait
 * keeps the gate across core's retries (one hold per acquire call, keyed by its wait signal),
 * so no later request takes a slot before it; it gives the gate back, with a NOTIFY, when it
 * is granted or gives up (core aborts the wait signal then). The server frees the gate of a
 * session that dies.
 */
export class WeightedSlots {
  readonly #connections: ConnectionMultiplexer;
  readonly #sequence: FencingSequence;
  readonly #holds = new WeakMap<AbortSignal, GateHold>();
  /** Gate releases in flight (close waits for them). */
  readonly pending: Set<Promise<void>> = new Set();

  constructor(connections: ConnectionMultiplexer, sequence: FencingSequence) {
    this.#connections = connections;
    this.#sequence = sequence;
  }

  /** One weighted attempt: all of `request.permits` slots, or none. */
  async attempt(
    request: LockRequest,
    semaphore: RequestKey,
    wait: WaitContext,
  ): Promise<PostgresGrant | null> {
    let hold = this.#holds.get(wait.signal);
    if (hold && !(hold.connection.usable && hold.connection.held.get(hold.key) === hold)) {
      this.#holds.delete(wait.signal); // its session died, and the gate with it
      hold = undefined;
    }
    hold ??= await this.#takeGate(request, semaphore);
    if (!hold) return null;
    let grant: PostgresGrant | null = null;
    try {
      grant = await this.#trySlots(hold.connection, request, semaphore);
    } finally {
      const waits = wait.deadline !== Number.NEGATIVE_INFINITY && !wait.signal.aborted;
      // Given back before this attempt returns: the caller's next request must find it free.
      if (grant || !waits || !hold.connection.usable) await this.#giveBack(wait.signal, hold);
      else this.#keep(wait.signal, hold);
    }
    return grant;
  }

  /** Tries for the gate on a shared session; undefined when someone else holds it. */
  async #takeGate(request: LockRequest, semaphore: RequestKey): Promise<GateHold | undefined> {
    const key = gateKey(semaphore.key).toString();
    const connection = await this.#connections.forAttempt(key, true); // `key` marked pending
    if (!connection) return undefined; // another request of this process holds or tries it
    try {
      const result = await connection.query<{ locked: boolean }>(tryGate, [key]);
      if (result.rows[0]?.locked !== true) {
        connection.mark(key, undefined);
        return undefined;
      }
    } catch (error) {
      connection.fail('could not try a semaphore gate', error);
      throw unavailable(request, error);
    }
    const hold: GateHold = { connection, key, channel: semaphore.channel };
    connection.mark(key, hold);
    return hold;
  }

  /** All the permits on the gate's session, or none (a partial take is undone at once). */
  async #trySlots(
    connection: LockConnection,
    request: LockRequest,
    semaphore: RequestKey,
  ): Promise<PostgresGrant | null> {
    const permits = request.permits ?? 1;
    return connection.turns.run(semaphore.text, async () => {
      if (!this.#sequence.confirmed) await this.#sequence.ensure(connection);
      const mine = connection.slots.get(semaphore.text);
      if ((mine?.size ?? 0) + permits > request.maxCount) return null;
      try {
        const attempt = this.#sequence.holds.trySlots(
          [
            semaphore.text,
            request.maxCount,
            randomInt(Math.min(request.maxCount, 2 ** 31 - 1)),
            [...(mine ?? [])],
            permits,
            this.#sequence.name,
          ],
          request.owner,
        );
        const result = await connection.query<{ token: string | null; slots: string[] }>(
          attempt.statement,
          attempt.values,
        );
        const row = result.rows[0];
        const slots = (row?.slots ?? []).map(Number);
        if (row?.token == null) {
          if (slots.length > 0) {
            await connection.query(unlockSlots, [semaphore.text, slots, semaphore.channel]);
          }
          return null;
        }
        const slot = slots[0] as number;
        const grant: PostgresGrant = {
          connection,
          key: slotKey(semaphore.key, slot).toString(),
          shared: false,
          semaphore: { key: semaphore.text, slot, slots, channel: semaphore.channel },
          fencingToken: BigInt(row.token),
        };
        holdSlot(connection, grant);
        return grant;
      } catch (error) {
        if (connection.usable) await sweepStraySlots(connection, semaphore.key, request.maxCount);
        throw unavailable(request, error);
      }
    });
  }

  /** Keeps the gate for the next attempt of the same wait; gives it back if the wait ends. */
  #keep(signal: AbortSignal, hold: GateHold): void {
    if (this.#holds.get(signal) === hold) return;
    this.#holds.set(signal, hold);
    signal.addEventListener(
      'abort',
      () => {
        if (this.#holds.get(signal) === hold) void this.#giveBack(signal, hold);
      },
      { once: true },
    );
  }

  /** Unlocks the gate (waking the waiters it held back); never rejects. */
  #giveBack(signal: AbortSignal, hold: GateHold): Promise<void> {
    if (this.#holds.get(signal) === hold) this.#holds.delete(signal);
    const { connection, key, channel } = hold;
    if (connection.held.get(key) !== hold) return Promise.resolve();
    if (!connection.usable) {
      connection.mark(key, undefined);
      return Promise.resolve();
    }
    const released = connection.query(unlockGate, [key, channel]).then(
      () => connection.mark(key, undefined),
      (error: unknown) => connection.fail('could not give a semaphore gate back', error),
    );
    this.pending.add(released);
    void released.finally(() => this.pending.delete(released));
    return released;
  }
}
