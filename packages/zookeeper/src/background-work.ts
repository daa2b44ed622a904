import { delay } from '@lockkit/core/backend';

/**
 * Clean-up that runs after the caller has moved on (a node whose create reply came late, a
 * delete that failed on a flaky connection). Never throws, never rejects unhandled; `drain`
 * lets `close()` wait for it, and `stopping` tells retry loops to finish.
 */
export class BackgroundWork {
  readonly #running = new Set<Promise<void>>();
  readonly #stop = new AbortController();
  #stopping = false;

  /** Aborts when `drain` begins: retry loops sleep on it, so none outlives close(). */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** True once `drain` began: retry loops make their last attempt. */
  get stopping(): boolean {
    return this.#stopping;
  }

  run(work: () => Promise<unknown>): void {
    const task = Promise.resolve()
      .then(work)
      .then(
        () => undefined,
        () => undefined,
      );
    this.#running.add(task);
    void task.finally(() => this.#running.delete(task));
  }

  /** Stops retry loops and waits for running work, at most `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    this.#stopping = true;
    this.#stop.abort();
    await within(timeoutMs, async () => {
      while (this.#running.size > 0) await Promise.all(this.#running);
    });
  }
}

/** Runs `work` and waits for it, at most `timeoutMs` (then it goes on unawaited). */
export async function within(timeoutMs: number, work: () => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const timeout = delay(timeoutMs, controller.signal).catch(() => undefined);
  const running = work().catch(() => undefined);
  await Promise.race([running, timeout]);
  controller.abort();
}
