import { LockLostError } from '../errors/lock-lost-error.js';
import type { Leadership, LeadershipEnd, LockHandle } from '../types.js';

/** Reads the lock handle behind a term (set by LeadershipTerm's static block). */
let handleOfTerm: (leadership: Leadership) => LockHandle | undefined;

/**
 * The mutex handle behind a leadership created by core. For fault hooks in tests ("break
 * this leader's hold"); application code never needs it.
 */
export function leadershipHandle(leadership: Leadership): LockHandle {
  const handle = handleOfTerm(leadership);
  if (!handle) throw new TypeError('Not a leadership created by a lockkit provider');
  return handle;
}

/**
 * One term: a held mutex handle, seen as leadership. The term's signal aborts when the
 * handle's signal does (the lock was lost), on `resign()` and when the provider closes —
 * always before the lock is released, so work that stops on the signal has stopped before a
 * successor can be elected.
 */
export class LeadershipTerm implements Leadership {
  readonly owner: string;
  readonly epoch: bigint;
  readonly #name: string;
  readonly #handle: LockHandle;
  readonly #controller = new AbortController();
  readonly #onEnd: (term: LeadershipTerm) => void;
  #end: LeadershipEnd | undefined;
  #resigned: Promise<void> | undefined;
  readonly #onLockLost = (): void => {
    this.#finish('lock-lost', this.#handle.signal.reason);
    // The lock is gone; releasing lets the provider forget the handle (ownership-checked).
    void this.#handle.release();
  };

  constructor(
    name: string,
    owner: string,
    handle: LockHandle,
    onEnd: (term: LeadershipTerm) => void,
  ) {
    this.#name = name;
    this.owner = owner;
    this.epoch = handle.fencingToken;
    this.#handle = handle;
    this.#onEnd = onEnd;
    if (handle.signal.aborted) this.#onLockLost();
    else handle.signal.addEventListener('abort', this.#onLockLost, { once: true });
  }

  static {
    handleOfTerm = (leadership) =>
      #handle in leadership ? (leadership as LeadershipTerm).#handle : undefined;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the term ended, or `undefined` while it lasts. */
  get end(): LeadershipEnd | undefined {
    return this.#end;
  }

  resign(): Promise<void> {
    this.#resigned ??= this.#close('resigned', 'leadership was resigned');
    return this.#resigned;
  }

  /** The provider is closing: ends the term (if it lasts) and releases the lock. */
  closeForProvider(): Promise<void> {
    this.#resigned ??= this.#close('provider-closed', 'the provider was closed');
    return this.#resigned;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.resign();
  }

  async #close(end: LeadershipEnd, why: string): Promise<void> {
    this.#finish(end, new LockLostError(this.#name, why));
    await this.#handle.release(); // never rejects
  }

  /** Ends the term once: the first cause wins; the signal aborts last, after bookkeeping. */
  #finish(end: LeadershipEnd, reason: unknown): void {
    if (this.#end) return;
    this.#end = end;
    this.#handle.signal.removeEventListener('abort', this.#onLockLost);
    this.#onEnd(this);
    this.#controller.abort(reason);
  }
}
