import { Wakeup } from '@lockkit/core';

/**
 * One waiter's wake-up: fired by a release message, and also when the lease that blocked its
 * last attempt is due to run out (a crashed holder publishes nothing).
 */
export class WaiterWakeup {
  readonly wakeup: Wakeup = new Wakeup();
  /** Set when the waiter was granted (its watch then closes without passing a wake-up on). */
  granted = false;
  #timer: NodeJS.Timeout | undefined;

  /** Wake in `ms` (+2 ms so the server's expiry has passed); replaces an earlier hint. */
  wakeAfter(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.wakeup.notify(), ms + 2);
    this.#timer.unref();
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** `work`'s value, or undefined as soon as `signal` aborts (work goes on; its outcome is ignored). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(noop);
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function noop(): void {}
