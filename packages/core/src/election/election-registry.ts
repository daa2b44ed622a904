import type { LeaderInfo } from '../types.js';
import type { LeadershipTerm } from './leadership-term.js';

/**
 * A provider's live terms: who leads each election as far as this provider knows, and what
 * to end when it closes. One per provider; terms register when elected and leave when they end.
 */
export class ElectionRegistry {
  readonly #terms = new Map<string, LeadershipTerm>();
  #closed = false;

  /** Records `term` as the live term of election `name`, or ends it if the provider is closing. */
  add(name: string, term: LeadershipTerm): void {
    if (this.#closed) {
      void term.closeForProvider();
      return;
    }
    this.#terms.set(name, term);
  }

  /** Forgets `term` (it ended). */
  delete(name: string, term: LeadershipTerm): void {
    if (this.#terms.get(name) === term) this.#terms.delete(name);
  }

  /** The live term of election `name` among this provider's participants. */
  leader(name: string): LeaderInfo | null {
    const term = this.#terms.get(name);
    return term ? { owner: term.owner, epoch: term.epoch } : null;
  }

  /**
   * Ends every term (their signals abort now, synchronously, before any lock is released)
   * and resolves once their locks are released. Terms elected later are ended at once.
   */
  close(): Promise<void> {
    this.#closed = true;
    const terms = [...this.#terms.values()];
    this.#terms.clear();
    return Promise.all(terms.map((term) => term.closeForProvider())).then(() => undefined);
  }
}
