/**
 * A memory "server" with switchable flaws, for the mutation corpus. Without flaws it behaves
 * like core's MemoryLockStore (holders and a FIFO queue per key, writer preference, fencing
 * counters that are never reset); each flaw is one plausible server-side bug.
 */
import { MemoryLockStore } from '@lockkit/core';
import type { LockRequest } from '@lockkit/core/backend';

export type StoreFlaw =
  | 'lifo'
  | 'readers-barge'
  | 'one-reader-per-release'
  | 'semaphore-off-by-one'
  | 'writer-ignores-readers'
  | 'readers-exclusive'
  | 'permit-stack'
  | 'token-reset'
  | 'withdraw-leak'
  | 'phantom-writer'
  | 'delayed-wakeup'
  | 'case-folded'
  | 'nfc'
  | 'truncated'
  | 'nul-trimmed'
  | 'blank-trimmed'
  | 'namespace-case-folded'
  | 'lossy-utf8'
  | 'namespace-ignored'
  | 'namespace-concat'
  | 'families-shared';

interface Waiter {
  readonly request: LockRequest;
  readonly grant: (id: number) => void;
}

interface Entry {
  readonly holders: Map<number, LockRequest>;
  readonly queue: Waiter[];
  phantomWriter: boolean;
}

export class FlawedStore extends MemoryLockStore {
  readonly #flaws: ReadonlySet<StoreFlaw>;
  readonly #entries = new Map<string, Entry>();
  readonly #tokens = new Map<string, bigint>();
  #nextId = 1;

  constructor(flaws: readonly StoreFlaw[] = []) {
    super();
    this.#flaws = new Set(flaws);
  }

  #has(flaw: StoreFlaw): boolean {
    return this.#flaws.has(flaw);
  }

  override keyOf(request: LockRequest): string {
    let { name, namespace } = request;
    if (this.#has('case-folded')) name = name.toLowerCase();
    if (this.#has('nfc')) name = name.normalize('NFC');
    if (this.#has('truncated')) name = name.slice(0, 200);
    if (this.#has('nul-trimmed')) name = name.replace(/\0+$/, '');
    if (this.#has('blank-trimmed')) name = name.trimEnd();
    if (this.#has('lossy-utf8')) name = Buffer.from(name, 'utf8').toString('utf8');
    if (this.#has('namespace-ignored')) namespace = '';
    if (this.#has('namespace-case-folded')) namespace = namespace.toLowerCase();
    const family =
      request.kind === 'read' || request.kind === 'write'
        ? 'rw'
        : this.#has('families-shared')
          ? 'semaphore'
          : request.kind;
    if (this.#has('namespace-concat')) return `${family}|${namespace}:${name}`;
    return JSON.stringify([namespace, family, name]);
  }

  override tryGrant(key: string, request: LockRequest): number | undefined {
    const entry = this.#entry(key);
    const queueFree =
      entry.queue.length === 0 || (request.kind === 'read' && this.#has('readers-barge'));
    if (queueFree && this.#compatible(entry, request)) return this.#hold(entry, request);
    this.#sweep(key, entry);
    return undefined;
  }

  override enqueue(key: string, request: LockRequest, grant: (id: number) => void): () => void {
    const entry = this.#entry(key);
    const waiter: Waiter = { request, grant };
    entry.queue.push(waiter);
    return () => {
      if (this.#has('withdraw-leak')) return; // the waiter stays queued; its grant is lost
      const index = entry.queue.indexOf(waiter);
      if (index < 0) return;
      entry.queue.splice(index, 1);
      if (request.kind === 'write' && this.#has('phantom-writer')) entry.phantomWriter = true;
      this.#pump(key, entry);
    };
  }

  override release(key: string, id: number): boolean {
    const entry = this.#entries.get(key);
    if (!entry?.holders.has(id)) return false;
    const request = entry.holders.get(id)!;
    if (request.kind === 'semaphore' && this.#has('permit-stack')) {
      entry.holders.delete([...entry.holders.keys()].at(-1)!); // frees the newest permit
    } else entry.holders.delete(id);
    if (this.#has('delayed-wakeup')) setTimeout(() => this.#pump(key, entry), 150);
    else this.#pump(key, entry);
    return true;
  }

  override holders(key: string): readonly number[] {
    return [...(this.#entries.get(key)?.holders.keys() ?? [])];
  }

  override holds(key: string, id: number): boolean {
    return this.#entries.get(key)?.holders.has(id) ?? false;
  }

  override nextToken(key: string): bigint {
    const token = (this.#tokens.get(key) ?? 0n) + 1n;
    this.#tokens.set(key, token);
    return token;
  }

  #entry(key: string): Entry {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { holders: new Map(), queue: [], phantomWriter: false };
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
    const lifo = this.#has('lifo');
    let granted = 0;
    for (
      let head = lifo ? entry.queue.at(-1) : entry.queue[0];
      head && this.#compatible(entry, head.request);
      head = lifo ? entry.queue.at(-1) : entry.queue[0]
    ) {
      if (head.request.kind === 'read' && granted > 0 && this.#has('one-reader-per-release')) break;
      if (lifo) entry.queue.pop();
      else entry.queue.shift();
      head.grant(this.#hold(entry, head.request));
      granted += 1;
    }
    this.#sweep(key, entry);
  }

  #sweep(key: string, entry: Entry): void {
    if (entry.holders.size === 0 && entry.queue.length === 0) {
      this.#entries.delete(key);
      if (this.#has('token-reset')) this.#tokens.delete(key);
    }
  }

  #compatible(entry: Entry, request: LockRequest): boolean {
    const holders = [...entry.holders.values()];
    switch (request.kind) {
      case 'mutex':
        return holders.length === 0;
      case 'write':
        if (this.#has('writer-ignores-readers')) return !holders.some((h) => h.kind === 'write');
        return holders.length === 0;
      case 'read':
        if (this.#has('readers-exclusive')) return holders.length === 0;
        if (entry.phantomWriter && holders.length > 0) return false;
        return !holders.some((h) => h.kind === 'write');
      case 'semaphore':
        return holders.length < request.maxCount + (this.#has('semaphore-off-by-one') ? 1 : 0);
    }
  }
}
