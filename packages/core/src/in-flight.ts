/**
 * A count of promises not yet settled, and a way to wait until there are none (a counter and
 * one reaction per promise: no collection churns on every acquire).
 */
export class InFlight {
  #count = 0;
  #onDrained: (() => void) | undefined;
  readonly #settled = (): void => {
    this.#count -= 1;
    if (this.#count === 0 && this.#onDrained) {
      const resolve = this.#onDrained;
      this.#onDrained = undefined;
      resolve();
    }
  };

  add(work: Promise<unknown>): void {
    this.#count += 1;
    work.then(this.#settled, this.#settled);
  }

  /** Resolves once nothing is in flight (including what is added meanwhile). */
  drained(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#onDrained;
      this.#onDrained = () => {
        previous?.();
        resolve();
      };
    });
  }
}
