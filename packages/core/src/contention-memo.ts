import { now } from './timing.js';

/**
 * Which locks were found held a moment ago, for backends whose waits block on the server in
 * one statement (PostgreSQL `pg_advisory_lock`, MySQL `GET_LOCK(…, timeout)`). Such a backend
 * tries on a shared session first and waits on a session of its own only when the try fails;
 * while a lock counts as contended, an acquire that will wait skips the try and blocks on the
 * server at once, so a hand-off costs one statement, as with the bare blocking call, instead
 * of a failed try first. A lock that became free meanwhile is granted by that same statement;
 * `windowMs` after the last failed try the next acquire tries on a shared session again.
 */
export class ContentionMemo {
  readonly #windowMs: number;
  /** Key → until when (performance.now() ms) it counts as contended; oldest first. */
  readonly #until = new Map<string, number>();

  constructor(windowMs = 1000) {
    this.#windowMs = windowMs;
  }

  /** Whether a try on `key` failed less than the window ago. */
  isContended(key: string): boolean {
    const until = this.#until.get(key);
    return until !== undefined && now() < until;
  }

  /** A try on `key` failed just now (expired entries are dropped, oldest first). */
  markContended(key: string): void {
    const at = now();
    this.#until.delete(key); // re-inserted last: the map stays ordered by expiry
    this.#until.set(key, at + this.#windowMs);
    for (const [other, until] of this.#until) {
      if (until > at) break;
      this.#until.delete(other);
    }
  }

  /** Keys remembered (expired ones may linger until the next mark). */
  get size(): number {
    return this.#until.size;
  }
}
