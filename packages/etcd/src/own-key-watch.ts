import type { Etcd3 } from 'etcd3';
import { type KeyWatch, watchFrom } from './key-watch.js';
import { stillOwned } from './queue-store.js';

type GoneListener = (reason: string, cause: unknown) => void;

/** Pause between checks of the key while etcd cannot be asked. */
const recheckDelayMs = 200;

/**
 * Watches a holder's own key: a deletion (by an operator, another client, or with its lease)
 * is the loss of the lock. The watch starts from the key's creation on, so no deletion is
 * missed; it is created only once the hold has lasted `delayMs`, so short holds cost no watch
 * at all (a deletion within that time is reported when the watch starts: the server replays
 * it).
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
  #timer: NodeJS.Timeout | undefined;

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

  /** Starts watching after `delayMs`, from just after the key's creation. */
  start(delayMs: number): void {
    this.#timer = setTimeout(() => this.#open(this.#createRevision + 1n), delayMs);
    this.#timer.unref(); // the hold keeps the process alive, not this timer
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
    clearTimeout(this.#timer);
    this.#listener = undefined;
    this.#watch?.close();
    this.#watch = undefined;
  }

  #open(fromRevision: bigint): void {
    if (this.#closed) return;
    this.#watch = watchFrom(
      this.#client,
      { key: this.#key, deletesOnly: true },
      { from: fromRevision },
      (event) => {
        if (event === 'delete') this.#end('the lock key was deleted');
        else if (event === 'failed') void this.#recheck();
      },
    );
  }

  /**
   * The server dropped the watch (a member stopping, a compaction): look whether the key is
   * still there, and watch again from there. While etcd cannot be asked, keep asking: the
   * lease's keepalive decides whether the session (and so the hold) is gone meanwhile.
   */
  async #recheck(): Promise<void> {
    this.#watch = undefined;
    while (!this.#closed && !this.#gone) {
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
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, recheckDelayMs));
      }
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
