import type { LockRequest } from '../backend.js';
import { keyFamily } from '../keys.js';
import type { LockHolder } from '../lock-state.js';

interface Waiter {
  readonly request: LockRequest;
  readonly grant: (id: number) => void;
}

/** What inspection knows of a grant, and how to tell its handle it was broken. */
interface GrantInfo {
  readonly request: LockRequest;
  readonly since: number;
  readonly fencingToken: bigint;
  lose?: ((reason: string) => void) | undefined;
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
  /** By holder id; kept apart from the entries so a subclass that replaces them still works. */
  readonly #grants = new Map<number, GrantInfo>();
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
    this.#grants.delete(id);
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

  /** Records a grant for inspection and returns its fencing token ({@link nextToken}). */
  recordGrant(key: string, id: number, request: LockRequest): bigint {
    const fencingToken = this.nextToken(key);
    this.#grants.set(id, { request, since: Date.now(), fencingToken });
    return fencingToken;
  }

  /** Tells `lose` when holder `id` is broken ({@link evict}); returns what stops it. */
  onLoss(id: number, lose: (reason: string) => void): () => void {
    const grant = this.#grants.get(id);
    if (grant) grant.lose = lose;
    return () => {
      if (grant?.lose === lose) grant.lose = undefined;
    };
  }

  /** Breaks holder `id`, or every holder of `key`, telling each; returns how many. */
  evict(key: string, reason: string, id?: number): number {
    const broken = id === undefined ? this.holders(key) : [id];
    let count = 0;
    for (const holder of broken) {
      const lose = this.#grants.get(holder)?.lose;
      if (!this.release(key, holder)) continue;
      count += 1;
      lose?.(reason);
    }
    return count;
  }

  /** The holds of `key` and its queue length, for `inspect()`. */
  inspect(key: string): { holders: LockHolder[]; waiting: number } {
    const holders = this.holders(key).map((id): LockHolder => {
      const grant = this.#grants.get(id);
      return {
        kind: grant?.request.kind ?? 'mutex',
        fencingToken: grant?.fencingToken,
        permits: grant?.request.permits ?? 1,
        owner: grant?.request.owner,
        since: grant?.since,
        validUntil: Number.POSITIVE_INFINITY,
      };
    });
    return { holders, waiting: this.#entries.get(key)?.queue.length ?? 0 };
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
