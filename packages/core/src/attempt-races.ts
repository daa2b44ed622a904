/** The reason an acquire stops with when its deadline passes. */
export const timedOut: unique symbol = Symbol('lockkit.timed-out');

/** Whatever can be told to stop an acquire: its {@link AcquireStop}, for close(). */
export interface Stoppable {
  abort(reason: unknown): void;
}

/**
 * What ends an acquire before it is granted: its deadline, the caller's signal, close(). A
 * plain object rather than an AbortController, whose event dispatch cost about a quarter of
 * an uncontended timed PostgreSQL acquire (A/B in acquire-policy.ts); the AbortSignal a
 * backend may read (`wait.signal`) is made only when it is read.
 */
export class AcquireStop implements Stoppable {
  #stopped = false;
  #reason: unknown;
  #controller: AbortController | undefined;
  /** The race in progress (one at a time): told when the acquire stops. */
  #onStop: ((reason: unknown) => void) | undefined;
  /** The cleanup of the race lost to the stop, if one was. */
  #aftermath: Promise<void> | undefined;

  get stopped(): boolean {
    return this.#stopped;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** An AbortSignal that aborts when the acquire stops. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#stopped) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Stops the acquire (the first reason wins). */
  abort(reason: unknown): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#onStop?.(reason);
  }

  throwIfStopped(): void {
    if (this.#stopped) throw this.#reason;
  }

  /**
   * Settles once the work of a race that lost to the stop has settled and a value it produced
   * late went through `onLate` (awaited when it returns a promise), or after `boundMs`,
   * whichever comes first; resolved at once when no race was lost. Never rejects.
   */
  aftermath(boundMs: number): Promise<void> {
    const cleanup = this.#aftermath;
    if (!cleanup) return settled;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, boundMs);
      timer.unref();
      void cleanup.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Resolves like `work`, or rejects with the stop's reason when the acquire stops first. A
   * value `work` produces after that goes to `onLate`, so a late grant is released, never
   * leaked; {@link aftermath} tells when that is done.
   */
  race<T>(work: Promise<T>, onLate: (value: NonNullable<T>) => unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let lost = false;
      const ended = work.then(
        (value) => {
          if (lost) return value != null ? onLate(value) : undefined;
          this.#onStop = undefined;
          resolve(value);
          return undefined;
        },
        (error: unknown) => {
          if (lost) return;
          this.#onStop = undefined;
          reject(error);
        },
      );
      const lose = (reason: unknown): void => {
        lost = true;
        this.#aftermath = ended.then(noop, noop);
        reject(reason);
      };
      if (this.#stopped) lose(this.#reason);
      else this.#onStop = lose;
    });
  }
}

const settled: Promise<void> = Promise.resolve();

function noop(): void {}
