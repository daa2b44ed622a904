import { delay } from '@lockkit/core/backend';

/**
 * Clean-up that runs after the caller has moved on (a key whose delete failed, a create whose
 * answer was lost). Never rejects; `drain` stops its retry loops and lets `close()` wait for
 * what is running, for a bounded time.
 */
export class BackgroundWork {
  readonly #running = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  /** Aborts when `drain` begins; retry loops sleep on it. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  run(work: (signal: AbortSignal) => Promise<unknown>): void {
    const task = Promise.resolve()
      .then(() => work(this.#stop.signal))
      .then(
        () => undefined,
        () => undefined,
      );
    this.#running.add(task);
    void task.finally(() => this.#running.delete(task));
  }

  /** Stops retry loops and waits for running work, at most `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    this.#stop.abort();
    const timeout = new AbortController();
    const running = (async () => {
      while (this.#running.size > 0) await Promise.all(this.#running);
    })();
    await Promise.race([running, delay(timeoutMs, timeout.signal).catch(() => undefined)]);
    timeout.abort();
  }
}
