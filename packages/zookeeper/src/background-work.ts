import { delay } from '@lockkit/core';

/**
 * Clean-up that runs after the caller has moved on (a node whose create reply came late, a
 * delete that failed on a flaky connection). Never throws, never rejects unhandled; `drain`
 * lets `close()` wait for it, and `stopping` tells retry loops to finish.
 */
export class BackgroundWork {
  readonly #running = new Set<Promise<void>>();
  #stopping = false;

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

  /** Waits for running work, at most `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    this.#stopping = true;
    const controller = new AbortController();
    const timeout = delay(timeoutMs, controller.signal).catch(() => undefined);
    const all = (async () => {
      while (this.#running.size > 0) await Promise.all(this.#running);
    })();
    await Promise.race([all, timeout]);
    controller.abort();
  }
}
