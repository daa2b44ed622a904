import { randomUUID } from 'node:crypto';
import { now, type WaitContext } from '@lockkit/core/backend';
import type { RedisLockKeys } from './redis-keys.js';
import type { WriterMarker } from './redis-lock-calls.js';

/** The marker of an attempt that is not a waiting writer. */
export const noMarker: WriterMarker = { waiterId: '', markerMs: 0 };

/**
 * Waiting writers' markers (they keep new readers out, for writer preference): one id per
 * acquire call (its wait signal), kept alive by its retries as long as the wait may last, and
 * withdrawn when the acquire ends without a grant (core aborts its signal then).
 */
export class WriterMarkers {
  readonly #ids = new WeakMap<AbortSignal, string>();
  readonly #registrationMs: number;
  readonly #withdraw: (keys: RedisLockKeys, waiterId: string) => void;

  /**
   * @param registrationMs how long a marker lasts without a refresh by a retry
   * @param withdraw takes a marker away on every node
   */
  constructor(registrationMs: number, withdraw: (keys: RedisLockKeys, waiterId: string) => void) {
    this.#registrationMs = registrationMs;
    this.#withdraw = withdraw;
  }

  /** The marker a write attempt of this acquire sets or refreshes. */
  markerOf(keys: RedisLockKeys, wait: WaitContext): WriterMarker {
    if (wait.deadline === Number.NEGATIVE_INFINITY) return noMarker; // a single try never waits
    let waiterId = this.#ids.get(wait.signal);
    if (waiterId === undefined) {
      const id = randomUUID();
      waiterId = id;
      this.#ids.set(wait.signal, id);
      wait.signal.addEventListener('abort', () => this.#withdraw(keys, id), { once: true });
    }
    const markerMs = Math.ceil(Math.min(wait.deadline - now(), this.#registrationMs));
    return markerMs > 0 ? { waiterId, markerMs } : noMarker;
  }
}
