function noop(): void {}

/**
 * Runs work after every earlier work of the same key has finished: semaphore attempts of one
 * semaphore on one session must see each other's results (to skip held slots).
 */
export class KeyedTurns {
  readonly #turns = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#turns.get(key) ?? Promise.resolve();
    const mine = previous.then(work);
    const settled = mine.then(noop, noop);
    this.#turns.set(key, settled);
    try {
      return await mine;
    } finally {
      if (this.#turns.get(key) === settled) this.#turns.delete(key);
    }
  }
}
