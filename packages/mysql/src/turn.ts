/**
 * An attempt in flight on a session; the next attempt on the same lock waits for `ended`
 * (built only if someone waits: most attempts end unobserved).
 */
export class Turn {
  #ended: Promise<void> | undefined;
  #end: (() => void) | undefined;
  #over = false;

  get ended(): Promise<void> {
    if (this.#over) return Promise.resolve();
    this.#ended ??= new Promise<void>((resolve) => {
      this.#end = resolve;
    });
    return this.#ended;
  }

  end(): void {
    this.#over = true;
    this.#end?.();
  }
}
