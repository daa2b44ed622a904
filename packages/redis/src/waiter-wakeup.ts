import { Wakeup } from '@lockkit/core/backend';

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
