interface Entrant {
  readonly admit: (admitted: boolean) => void;
}

/**
 * Caps the server-side waits running at once (each occupies a connection). Further
 * entrants queue in arrival order; an entrant whose signal aborts leaves the queue.
 */
export class WaitGate {
  #free: number;
  readonly #queue: Entrant[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves true when admitted, false if `signal` aborted first (nothing to leave then). */
  enter(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entrant: Entrant = {
        admit: (admitted) => {
          signal.removeEventListener('abort', onAbort);
          resolve(admitted);
        },
      };
      const onAbort = (): void => {
        const index = this.#queue.indexOf(entrant);
        if (index >= 0) this.#queue.splice(index, 1);
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(entrant);
    });
  }

  /** Frees a place (admits the next entrant, if any). */
  leave(): void {
    const next = this.#queue.shift();
    if (next) next.admit(true);
    else this.#free += 1;
  }

  /** Turns every queued entrant away (provider close). */
  drain(): void {
    for (const entrant of this.#queue.splice(0)) entrant.admit(false);
  }
}
