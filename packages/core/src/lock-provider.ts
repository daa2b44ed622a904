import { type AcquireHost, acquireWithPolicy } from './acquire-policy.js';
import type { Stoppable } from './attempt-races.js';
import type { Grant, LockBackend, LockRequest } from './backend.js';
import { publish } from './diagnostics.js';
import { Election } from './election/election.js';
import { electionLockName, validateElectionOptions } from './election/election-options.js';
import { ElectionRegistry } from './election/election-registry.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { LockAbortedError } from './errors/lock-aborted-error.js';
import { ProviderClosedError } from './errors/provider-closed-error.js';
import { resumeHandle } from './hand-over.js';
import { InFlight } from './in-flight.js';
import { defaultOwnerLabel, forceReleaseLock, inspectLock } from './inspection.js';
import { ManagedHandle } from './lock-handle.js';
import { stringOption } from './option-validation.js';
import {
  type AcquireFunction,
  type AdminFunctions,
  DistributedLock,
  ReadWriteLock,
  Semaphore,
} from './primitives.js';
import type {
  Capabilities,
  ElectionOptions,
  IDistributedLock,
  IElection,
  ILockProvider,
  IReadWriteLock,
  ISemaphore,
  LockKind,
} from './types.js';
import { validateAcquireOptions, validateMaxCount, validateName } from './validation.js';

/** Options every provider accepts (backends extend this). */
export interface LockProviderOptions {
  /**
   * Isolates applications sharing a server: the same name in two namespaces is two locks.
   * @defaultValue ''
   */
  readonly namespace?: string | undefined;
  /**
   * A label recorded with every hold this provider makes, reported by `lock.inspect()` (for
   * people and dashboards; not an identity check).
   * @defaultValue `<hostname>:<pid>`
   */
  readonly owner?: string | undefined;
}

/** The option keys every provider accepts: backends add them to their own list. */
export const PROVIDER_OPTION_KEYS: readonly string[] = Object.freeze(['namespace', 'owner']);

/**
 * The one {@link ILockProvider} implementation: wraps a {@link LockBackend} and applies the
 * shared policy. Backend packages export a factory that returns `new LockProvider(backend)`.
 */
export class LockProvider<G extends Grant = Grant> implements ILockProvider {
  readonly backend: string;
  readonly capabilities: Capabilities;
  readonly namespace: string;
  /** The label recorded with every hold (`owner` option). */
  readonly owner: string;
  readonly #backend: LockBackend<G>;
  readonly #handles = new HandleList<G>();
  readonly #waits = new Map<Stoppable, LockRequest>();
  readonly #elections = new ElectionRegistry();
  /** Backend calls core started that have not settled (close() waits for them). */
  readonly #inFlight = new InFlight();
  readonly #acquire: AcquireFunction;
  readonly #admin: AdminFunctions;
  #closing: Promise<void> | undefined;

  constructor(backend: LockBackend<G>, options: LockProviderOptions = {}) {
    const namespace = options.namespace ?? '';
    if (typeof namespace !== 'string') {
      throw new InvalidArgumentError(`namespace must be a string, got ${typeof namespace}`);
    }
    this.#backend = backend;
    this.backend = backend.backend;
    this.capabilities = Object.freeze({ ...backend.capabilities });
    this.namespace = namespace;
    const owner = stringOption('owner', options.owner, defaultOwnerLabel());
    this.owner = owner;
    const host = this.#host();
    // A plain function, not an async one: returning the policy's promise from an async
    // function would cost every acquire two more promise jobs. Errors become rejections.
    this.#acquire = (kind, name, maxCount, options, mode) => {
      try {
        const target =
          options === undefined
            ? undefined
            : { backend: this.backend, capabilities: this.capabilities, kind, maxCount };
        const valid = validateAcquireOptions(
          options,
          mode === 'try' ? 0 : Number.POSITIVE_INFINITY,
          target,
        );
        const request: LockRequest =
          valid.permits === undefined
            ? { name, namespace, kind, maxCount, owner }
            : {
                name,
                namespace,
                kind,
                maxCount,
                owner,
                permits: valid.permits,
                leaseMs: valid.leaseMs,
                autoExtend: valid.autoExtend,
              };
        return acquireWithPolicy(host, request, valid, mode === 'acquire');
      } catch (error) {
        return Promise.reject(error);
      }
    };
    const admin = (kind: LockKind, name: string, maxCount: number): LockRequest => {
      this.#assertOpen();
      return { name, namespace, kind, maxCount, owner };
    };
    // On the books like every backend call, so close() closes the backend only after them.
    this.#admin = {
      inspect: async (kind, name, maxCount) =>
        this.#track(inspectLock(backend, admin(kind, name, maxCount))),
      forceRelease: async (kind, name, maxCount) =>
        this.#track(forceReleaseLock(backend, admin(kind, name, maxCount))),
      resume: (kinds, name, maxCount, token) =>
        resumeHandle({ ...host, namespace, owner }, { kinds, name, maxCount }, token),
    };
  }

  createLock(name: string): IDistributedLock {
    this.#assertOpen();
    return new DistributedLock(this.#acquire, this.#admin, validateName(name));
  }

  createReadWriteLock(name: string): IReadWriteLock {
    this.#assertOpen();
    return new ReadWriteLock(this.#acquire, this.#admin, validateName(name));
  }

  createSemaphore(name: string, maxCount: number): ISemaphore {
    this.#assertOpen();
    return new Semaphore(
      this.#acquire,
      this.#admin,
      validateName(name),
      validateMaxCount(maxCount),
    );
  }

  createElection(name: string, options?: ElectionOptions): IElection {
    this.#assertOpen();
    const electionName = validateName(name);
    const valid = validateElectionOptions(options);
    const lock = this.createLock(electionLockName(electionName));
    return new Election(electionName, lock, valid, this.#elections);
  }

  /** Handles currently held through this provider. */
  get heldCount(): number {
    return this.#handles.size;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #close(): Promise<void> {
    // Leaderships end first: their signals abort before their locks are released.
    const leaderships = this.#elections.close();
    for (const [acquire, request] of this.#waits) {
      acquire.abort(new LockAbortedError(request.name, 'the provider was closed'));
    }
    // Aborted attempts settle first (their late grants are discarded), then handles go.
    await this.#inFlight.drained();
    await Promise.all(this.#handles.toArray().map((handle) => handle.release()));
    await leaderships;
    await this.#inFlight.drained();
    await this.#backend.close();
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    return work;
  }

  #assertOpen(): void {
    if (this.#closing) throw new ProviderClosedError(this.backend);
  }

  #host(): AcquireHost<G> {
    return {
      backend: this.#backend,
      assertOpen: () => this.#assertOpen(),
      trackWait: (acquire, request) => {
        // A wait that starts while close() runs (its first try was in flight) ends at once.
        if (this.#closing)
          acquire.abort(new LockAbortedError(request.name, 'the provider was closed'));
        this.#waits.set(acquire, request);
        return () => this.#waits.delete(acquire);
      },
      adopt: (request, grant) => {
        if (this.#closing) {
          // On the books, so close() calls backend.close() only after this release settled.
          const released = this.#backend.release(request, grant).catch(() => false);
          this.#inFlight.add(released);
          return released.then(() => {
            throw new LockAbortedError(request.name, 'the provider was closed');
          });
        }
        const handles = this.#handles;
        let node: HandleNode<G> | undefined;
        const handle = new ManagedHandle(this.#backend, request, grant, () => {
          if (node) handles.delete(node);
        });
        node = handles.add(handle);
        return handle;
      },
      track: (work) => this.#track(work),
      discard: (request, grant) => {
        const cleanup = this.#backend.release(request, grant).then(
          () => undefined,
          (error: unknown) => {
            // Nobody holds this grant; a session backend frees it with the connection and a
            // lease backend when the lease runs out. Report it rather than swallow it.
            publish('release', () => ({
              backend: this.backend,
              name: request.name,
              kind: request.kind,
              fencingToken: grant.fencingToken,
              stillHeld: false,
              error,
            }));
          },
        );
        this.#inFlight.add(cleanup);
        return cleanup;
      },
    };
  }
}

/** A held handle's place in its provider's {@link HandleList}. */
interface HandleNode<G extends Grant> {
  readonly handle: ManagedHandle<G>;
  prev: HandleNode<G> | undefined;
  next: HandleNode<G> | undefined;
  linked: boolean;
}

/** The handles a provider holds: a linked list, so adding and removing one hash nothing. */
class HandleList<G extends Grant> {
  size = 0;
  #head: HandleNode<G> | undefined;

  add(handle: ManagedHandle<G>): HandleNode<G> {
    const node: HandleNode<G> = { handle, prev: undefined, next: this.#head, linked: true };
    if (this.#head) this.#head.prev = node;
    this.#head = node;
    this.size += 1;
    return node;
  }

  delete(node: HandleNode<G>): void {
    if (!node.linked) return;
    node.linked = false;
    const { prev, next } = node;
    if (prev) prev.next = next;
    else this.#head = next;
    if (next) next.prev = prev;
    // A released handle keeps its node (through its onDone): let go of the neighbours.
    node.prev = undefined;
    node.next = undefined;
    this.size -= 1;
  }

  /** The handles held now (a copy: releasing them while walking it is safe). */
  toArray(): ManagedHandle<G>[] {
    const handles: ManagedHandle<G>[] = [];
    for (let node = this.#head; node; node = node.next) handles.push(node.handle);
    return handles;
  }
}
