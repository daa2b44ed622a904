import type { ZkSession } from './zk-session.js';

/**
 * Removes lock parent nodes that releases left empty. The removal waits `delayMs` after the
 * last release in this provider, so a lock taken again and again does not pay for deleting
 * and re-creating its parent every time; a parent that has children by then stays (the
 * server refuses to delete it: NOT_EMPTY). `flush` (on close) removes the rest at once.
 */
export class ParentReaper {
  readonly #delayMs: number;
  readonly #session: () => ZkSession | undefined;
  readonly #pending = new Map<string, NodeJS.Timeout>();
  readonly #running = new Set<Promise<void>>();

  /** `session` returns the live session to remove with (none: skip, the next release retries). */
  constructor(delayMs: number, session: () => ZkSession | undefined) {
    this.#delayMs = delayMs;
    this.#session = session;
  }

  /** An acquire of `parent` began here: keep the parent. */
  keep(parent: string): void {
    clearTimeout(this.#pending.get(parent));
    this.#pending.delete(parent);
  }

  /**
   * `parent` may be empty now; remove it after the delay. When the delay is 0 the removal is
   * sent at once and the returned promise settles with it (so a release can include it).
   */
  schedule(parent: string): Promise<void> {
    this.keep(parent);
    if (this.#delayMs === 0) return this.#remove(parent);
    const timer = setTimeout(() => {
      this.#pending.delete(parent);
      this.#remove(parent);
    }, this.#delayMs);
    timer.unref();
    this.#pending.set(parent, timer);
    return Promise.resolve();
  }

  /** Forgets every scheduled removal (close, with a server that does not answer). */
  cancel(): void {
    for (const timer of this.#pending.values()) clearTimeout(timer);
    this.#pending.clear();
  }

  /** Removes every scheduled parent now and waits for all removals. */
  async flush(): Promise<void> {
    for (const [parent, timer] of this.#pending) {
      clearTimeout(timer);
      this.#remove(parent);
    }
    this.#pending.clear();
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  #remove(parent: string): Promise<void> {
    const session = this.#session();
    if (!session || session.lost) return Promise.resolve();
    const removal = session.remove(parent).then(
      () => undefined,
      () => undefined, // a parent left behind costs one node; the next release retries
    );
    this.#running.add(removal);
    void removal.finally(() => this.#running.delete(removal));
    return removal;
  }
}
