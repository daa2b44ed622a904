import type { LockRequest } from '../backend.js';
import { keyFamily } from '../keys.js';

interface Waiter {
  readonly request: LockRequest;
  readonly grant: (id: number) => void;
}

interface Entry {
  readonly holders: Map<number, LockRequest>;
  readonly queue: Waiter[];
}

/**
 * The in-memory "server": holders and a FIFO queue per key, and fencing counters that are
 * never deleted. Providers sharing a store behave like clients of one server; by default
 * every memory provider in the process shares {@link defaultMemoryStore}.
 */
export class MemoryLockStore {
  readonly #entries = new Map<string, Entry>();
  readonly #tokens = new Map<string, bigint>();
  #nextId = 1;

  /** Key of a request: (namespace, kind family, name), unambiguously. */
  keyOf(request: LockRequest): string {
    return JSON.stringify([request.namespace, keyFamily(request.kind), request.name]);
  }

  /** Grants at once if no one is queued ahead and the request is compatible with the holders. */
  tryGrant(key: string, request: LockRequest): number | undefined {
    const entry = this.#entry(key);
    if (entry.queue.length === 0 && compatible(entry, request)) return this.#hold(entry, request);
    this.#sweep(key, entry);
    return undefined;
  }

  /** Queues a waiter (FIFO); returns the function that withdraws it. */
  enqueue(key: string, request: LockRequest, grant: (id: number) => void): () => void {
    const entry = this.#entry(key);
    const waiter: Waiter = { request, grant };
    entry.queue.push(waiter);
    return () => {
      const index = entry.queue.indexOf(waiter);
      if (index < 0) return;
      entry.queue.splice(index, 1);
      this.#pump(key, entry); // a withdrawn writer may unblock readers behind it
    };
  }

  /** Removes holder `id`; true if it was holding. */
  release(key: string, id: number): boolean {
    const entry = this.#entries.get(key);
    if (!entry?.holders.delete(id)) return false;
    this.#pump(key, entry);
    return true;
  }

  /** Ids of the current holders of `key` (for inspection and tests). */
  holders(key: string): readonly number[] {
    return [...(this.#entries.get(key)?.holders.keys() ?? [])];
  }

  /** True if holder `id` still holds `key`. */
  holds(key: string, id: number): boolean {
    return this.#entries.get(key)?.holders.has(id) ?? false;
  }

  /** Next fencing token for `key` (strictly increasing, never reset). */
  nextToken(key: string): bigint {
    const token = (this.#tokens.get(key) ?? 0n) + 1n;
    this.#tokens.set(key, token);
    return token;
  }

  /** Number of keys with holders or waiters (0 when nothing leaked). */
  get activeKeys(): number {
    return this.#entries.size;
  }

  #entry(key: string): Entry {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { holders: new Map(), queue: [] };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  #hold(entry: Entry, request: LockRequest): number {
    const id = this.#nextId++;
    entry.holders.set(id, request);
    return id;
  }

  #pump(key: string, entry: Entry): void {
    for (
      let head = entry.queue[0];
      head && compatible(entry, head.request);
      head = entry.queue[0]
    ) {
      entry.queue.shift();
      head.grant(this.#hold(entry, head.request));
    }
    this.#sweep(key, entry);
  }

  #sweep(key: string, entry: Entry): void {
    if (entry.holders.size === 0 && entry.queue.length === 0) this.#entries.delete(key);
  }
}

function compatible(entry: Entry, request: LockRequest): boolean {
  switch (request.kind) {
    case 'mutex':
    case 'write':
      return entry.holders.size === 0;
    case 'read':
      for (const holder of entry.holders.values()) if (holder.kind === 'write') return false;
      return true;
    case 'semaphore': {
      // Weighted: the permits held plus those asked for fit (a waiting request is only
      // granted from the head of the FIFO queue, so later small ones never overtake it).
      let taken = request.permits ?? 1;
      for (const holder of entry.holders.values()) taken += holder.permits ?? 1;
      return taken <= request.maxCount;
    }
  }
}

/** The store shared by memory providers that are not given one. */
export const defaultMemoryStore: MemoryLockStore = new MemoryLockStore();
