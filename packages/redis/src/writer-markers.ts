import { randomUUID } from 'node:crypto';
import { type LockRequest, now, type WaitContext } from '@lockkit/core/backend';
import type { RedisLockKeys } from './redis-keys.js';
import type { WriterMarker } from './redis-lock-calls.js';

/** The marker of an attempt that is not a waiting writer. */
export const noMarker: WriterMarker = { waiterId: '', markerMs: 0 };

/**
 * Waiting writers' markers (they keep new readers out, for writer preference), and waiting
 * weighted semaphore requests' reservations (they keep later requests out, head of line): one
 * id per acquire call (its wait signal), kept alive by its retries as long as the wait may last,
 * and withdrawn when the acquire ends without a grant (core aborts its signal then).
 */
export class WriterMarkers {
  readonly #ids = new WeakMap<AbortSignal, string>();
  readonly #registrationMs: number;
  readonly #withdraw: (keys: RedisLockKeys, waiterId: string) => void;
  readonly #newId: () => string;

  /**
   * @param registrationMs how long a marker lasts without a refresh by a retry
   * @param withdraw takes a marker away on every node
   * @param newId makes the id of a new marker
   */
  constructor(
    registrationMs: number,
    withdraw: (keys: RedisLockKeys, waiterId: string) => void,
    newId: () => string = randomUUID,
  ) {
    this.#registrationMs = registrationMs;
    this.#withdraw = withdraw;
    this.#newId = newId;
  }

  /** The marker a write attempt of this acquire sets or refreshes. */
  markerOf(keys: RedisLockKeys, wait: WaitContext): WriterMarker {
    if (wait.deadline === Number.NEGATIVE_INFINITY) return noMarker; // a single try never waits
    let waiterId = this.#ids.get(wait.signal);
    if (waiterId === undefined) {
      const id = this.#newId();
      waiterId = id;
      this.#ids.set(wait.signal, id);
      wait.signal.addEventListener('abort', () => this.#withdraw(keys, id), { once: true });
    }
    const markerMs = Math.ceil(Math.min(wait.deadline - now(), this.#registrationMs));
    return markerMs > 0 ? { waiterId, markerMs } : noMarker;
  }
}

/**
 * A reservation's id: the wall-clock ms of the request's first attempt (15 digits, so ids of
 * every client sort in arrival order, up to their clocks' skew), then a random part.
 */
export function reservationId(): string {
  return `${String(Date.now()).padStart(15, '0')}:${randomUUID()}`;
}

/**
 * The markers of waiting requests: a waiting writer's (writer preference) and a waiting
 * weighted semaphore request's reservation (head of line, see acquireSemaphore).
 */
export class WaitMarkers {
  readonly #writers: WriterMarkers;
  readonly #reservations: WriterMarkers;

  /** @param withdraw takes the marker `waiterId` out of `key` on every node */
  constructor(
    registrationMs: number,
    withdraw: (keys: RedisLockKeys, key: string, waiterId: string) => void,
  ) {
    this.#writers = new WriterMarkers(registrationMs, (keys, id) =>
      withdraw(keys, keys.writersWaiting, id),
    );
    this.#reservations = new WriterMarkers(
      registrationMs,
      (keys, id) => withdraw(keys, keys.reservations, id),
      reservationId,
    );
  }

  /** The marker an attempt of this request sets or refreshes ({@link noMarker} for none). */
  markerOf(request: LockRequest, keys: RedisLockKeys, wait: WaitContext): WriterMarker {
    if (request.kind === 'write') return this.#writers.markerOf(keys, wait);
    if (request.kind === 'semaphore' && (request.permits ?? 1) > 1) {
      return this.#reservations.markerOf(keys, wait);
    }
    return noMarker;
  }

  /** The key a request's marker lives in. */
  static keyOf(request: LockRequest, keys: RedisLockKeys): string {
    return request.kind === 'write' ? keys.writersWaiting : keys.reservations;
  }
}
