import type { Etcd3 } from 'etcd3';
import { type KeyWatch, watchFrom } from './key-watch.js';
import { stillOwned } from './queue-store.js';

type GoneListener = (reason: string, cause: unknown) => void;

/**
 * Watches a contender's own key from its creation on, for the whole wait and hold: a key that
 * is deleted (by an operator, another client, or with its lease) wakes the waiting contender,
 * and once it holds the lock, is reported as the loss of the lock.
 */
export class OwnKeyWatch {
  readonly #client: Etcd3;
  readonly #key: string;
  readonly #createRevision: bigint;
  readonly #checkTimeoutMs: number;
  #watch: KeyWatch | undefined;
  #listener: GoneListener | undefined;
  #gone: { reason: string; cause: unknown } | undefined;
  #closed = false;

  constructor(client: Etcd3, key: string, createRevision: bigint, checkTimeoutMs: number) {
    this.#client = client;
    this.#key = key;
    this.#createRevision = createRevision;
    this.#checkTimeoutMs = checkTimeoutMs;
  }

  /** Whether the key was seen deleted. */
  get gone(): boolean {
    return this.#gone !== undefined;
  }

  /** Starts watching (from just after the key's creation, so no deletion is missed). */
  start(): void {
    this.#open(this.#createRevision + 1n);
  }

  /**
   * Where a deletion goes from now on (`undefined`: nowhere). A deletion seen earlier is
   * reported to the new listener on a later tick, never synchronously.
   */
  attach(listener: GoneListener | undefined): void {
    this.#listener = listener;
    const gone = this.#gone;
    if (gone && listener) {
      queueMicrotask(() => {
        if (this.#listener === listener) listener(gone.reason, gone.cause);
      });
    }
  }

  /** Stops watching. */
  close(): void {
    this.#closed = true;
    this.#listener = undefined;
    this.#watch?.close();
    this.#watch = undefined;
  }

  #open(fromRevision: bigint): void {
    if (this.#closed) return;
    this.#watch = watchFrom(
      this.#client,
      { key: this.#key, deletesOnly: true },
      fromRevision,
      (event) => {
        if (event === 'delete') this.#end('the lock key was deleted');
        else if (event === 'failed') void this.#recheck();
      },
    );
  }

  /** The server dropped the watch: look whether the key is still there, and watch again. */
  async #recheck(): Promise<void> {
    this.#watch = undefined;
    try {
      const deadline = performance.now() + this.#checkTimeoutMs;
      const { owned, revision } = await stillOwned(
        this.#client,
        this.#key,
        this.#createRevision,
        deadline,
      );
      if (!owned) this.#end('the lock key was deleted');
      else this.#open(revision + 1n);
    } catch (error) {
      // Cannot tell: the lease's keepalive decides whether the session (and so the hold) is
      // still there; a key that vanished meanwhile is reported as lost to be safe.
      this.#end('the watch on the lock key ended and the key could not be checked', error);
    }
  }

  #end(reason: string, cause?: unknown): void {
    if (this.#gone || this.#closed) return;
    this.#gone = { reason, cause: cause ?? new Error(reason) };
    this.#watch?.close();
    this.#watch = undefined;
    this.#listener?.(reason, this.#gone.cause);
  }
}
