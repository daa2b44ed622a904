interface Place {
  readonly admit: () => void;
}

/**
 * One server-side waiter per lock per provider: the others line up here, in arrival order,
 * so a hundred local waiters for one lock cost one waiting session instead of a hundred.
 * (The server still decides between processes.)
 */
export class WaitLine {
  readonly #lines = new Map<string, Place[]>();

  /**
   * Resolves with the function that lets the next waiter in once `key` is ours to wait on;
   * rejects with `signal.reason` if `signal` aborts first (the place is given up).
   */
  enter(key: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    let line = this.#lines.get(key);
    if (!line) {
      line = [];
      this.#lines.set(key, line);
    }
    const current = line;
    const leave = (): void => {
      current.shift();
      const next = current[0];
      if (next) next.admit();
      else this.#lines.delete(key);
    };
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const index = current.indexOf(place);
        if (index === 0) leave();
        else if (index > 0) current.splice(index, 1);
        reject(signal.reason);
      };
      const place: Place = {
        admit: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(once(leave));
        },
      };
      current.push(place);
      signal.addEventListener('abort', onAbort, { once: true });
      if (current.length === 1) place.admit();
    });
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}
