import type { Grant, LockBackend, LockRequest, WaitContext } from '../backend.js';
import { LockProvider, type LockProviderOptions } from '../lock-provider.js';
import type { BackendLockState } from '../lock-state.js';
import { grantBehind } from '../name-prefix.js';
import type { Capabilities, LockHandle } from '../types.js';
import { defaultMemoryStore, type MemoryLockStore } from './memory-lock-store.js';

/** Options of {@link createMemoryLockProvider}. */
export interface MemoryLockProviderOptions extends LockProviderOptions {
  /**
   * Where locks live. Providers sharing a store see each other's locks, like clients of
   * one server. Pass `new MemoryLockStore()` for an isolated world.
   * @defaultValue the process-wide `defaultMemoryStore`
   */
  readonly store?: MemoryLockStore | undefined;
}

/** A memory grant: the key and holder id in the store. */
export interface MemoryGrant extends Grant {
  readonly key: string;
  readonly id: number;
}

const memoryCapabilities: Capabilities = {
  crossProcess: false,
  handOver: false, // in-process only: there is no other process to hand a hold to
  leases: false,
  minLeaseMs: Number.POSITIVE_INFINITY, // holds are not leases
  weightedPermits: true,
  inspection: true,
  fifo: true,
  lostDetectionMs: 0,
  abandonedReleaseMs: Number.POSITIVE_INFINITY,
  unavailableMs: 0, // no server to lose
};

/**
 * The in-memory backend: the reference {@link LockBackend}. Its `tryAcquire` queues the
 * caller (FIFO) like a server-side wait; `evict` is its fault hook.
 */
export class MemoryBackend implements LockBackend<MemoryGrant> {
  readonly backend = 'memory';
  readonly capabilities: Capabilities = memoryCapabilities;
  readonly pollIntervalMs = 1000;
  readonly store: MemoryLockStore;

  constructor(store: MemoryLockStore) {
    this.store = store;
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<MemoryGrant | null> {
    const key = this.store.keyOf(request);
    const id = this.store.tryGrant(key, request);
    if (id !== undefined) return Promise.resolve(this.#grant(key, id, request));
    if (wait.deadline === Number.NEGATIVE_INFINITY || wait.signal.aborted) {
      return Promise.resolve(null);
    }
    wait.waiting();
    return new Promise((resolve) => {
      const onAbort = (): void => {
        withdraw();
        resolve(null);
      };
      const withdraw = this.store.enqueue(key, request, (grantedId) => {
        wait.signal.removeEventListener('abort', onAbort);
        resolve(this.#grant(key, grantedId, request));
      });
      wait.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(_request: LockRequest, grant: MemoryGrant): Promise<boolean> {
    return Promise.resolve(this.store.release(grant.key, grant.id));
  }

  monitor(_request: LockRequest, grant: MemoryGrant, lose: (reason: string) => void): () => void {
    return this.store.onLoss(grant.id, lose);
  }

  inspect(request: LockRequest): Promise<BackendLockState> {
    return Promise.resolve(this.store.inspect(this.store.keyOf(request)));
  }

  forceRelease(request: LockRequest): Promise<number> {
    const reason = 'the hold was broken by forceRelease()';
    return Promise.resolve(this.store.evict(this.store.keyOf(request), reason));
  }

  /** Fault injection: the "server" drops the hold, and the holder is told. */
  evict(grant: MemoryGrant): void {
    this.store.evict(grant.key, 'the hold was evicted (injected fault)', grant.id);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #grant(key: string, id: number, request: LockRequest): MemoryGrant {
    return { key, id, fencingToken: this.store.recordGrant(key, id, request) };
  }
}

/**
 * The in-memory provider: the reference implementation of the contract, for tests and
 * development, and the embedded default. FIFO waiting, writer preference, fencing tokens,
 * lost signal through {@link MemoryLockProvider.loseLock}. Locks are visible only inside
 * this process.
 */
export class MemoryLockProvider extends LockProvider<MemoryGrant> {
  readonly #memory: MemoryBackend;

  constructor(options: MemoryLockProviderOptions = {}) {
    const memory = new MemoryBackend(options.store ?? defaultMemoryStore);
    super(memory, options);
    this.#memory = memory;
  }

  /** The store this provider's locks live in. */
  get store(): MemoryLockStore {
    return this.#memory.store;
  }

  /**
   * Fault injection: behave as if the server dropped this hold (like an expired lease or a
   * killed session). The lock becomes free for others and `handle.signal` aborts with
   * LockLostError.
   */
  loseLock(handle: LockHandle): void {
    this.#memory.evict(grantBehind<MemoryGrant>(handle).grant);
  }
}

/** Creates an in-memory lock provider. */
export function createMemoryLockProvider(
  options: MemoryLockProviderOptions = {},
): MemoryLockProvider {
  return new MemoryLockProvider(options);
}
