/**
 * The lockkit contract. Every backend offers the three primitives below through an
 * {@link ILockProvider}; the semantics are listed in docs/contract.md and checked by
 * `@lockkit/conformance`. Policy that is the same everywhere (argument checks, timeouts,
 * abort, handle bookkeeping, lease extension, diagnostics) lives once in `@lockkit/core`;
 * each backend supplies only a {@link LockBackend} (see backend.ts).
 *
 * @module
 */

import type { Capabilities } from './capabilities.js';
import type { LockAdministration } from './lock-state.js';

export type { Capabilities } from './capabilities.js';

/** Options for every acquire call. Unknown keys are rejected with `InvalidArgumentError`. */
export interface AcquireOptions {
  /**
   * Milliseconds to wait for the lock: `0` is a single attempt, `Infinity` waits forever.
   * Must be `Infinity` or a number in [0, 2^31-1]; anything else is an `InvalidArgumentError`
   * (a `RangeError`) before any I/O.
   * @defaultValue `Infinity` for `acquire*`/`with*`, `0` for `tryAcquire*`.
   */
  readonly timeout?: number | undefined;
  /**
   * Aborts the WAIT (never a held lock): the call rejects with `signal.reason`. An
   * already-aborted signal rejects at once without I/O. A grant that races the abort is
   * released, never leaked.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * This hold's lease length in ms, on backends whose lease is chosen per hold
   * (`capabilities.minLeaseMs` finite: Redis): an integer from `minLeaseMs` to 2^31-1.
   * Elsewhere an `InvalidArgumentError` before any I/O.
   * @defaultValue the provider's `leaseMs`
   */
  readonly leaseMs?: number | undefined;
  /**
   * Whether this hold's lease is extended automatically (every third of it) while the handle
   * lives. `false`: the hold lasts at most `leaseMs` unless `handle.extend()` is called, then
   * `handle.signal` aborts with `LockLostError` and the lock is free for others. Same backends
   * as `leaseMs`; elsewhere an `InvalidArgumentError` before any I/O.
   * @defaultValue the provider's `autoExtend`
   */
  readonly autoExtend?: boolean | undefined;
}

/** Options of a semaphore acquire. */
export interface SemaphoreAcquireOptions extends AcquireOptions {
  /**
   * How many permits this hold takes, all or nothing: an integer from 1 to `maxCount`
   * (anything else is an `InvalidArgumentError` before any I/O). More than 1 needs
   * `capabilities.weightedPermits`. A waiting request is not overtaken by later, smaller ones
   * (docs/contract.md, "Weighted permits").
   * @defaultValue 1
   */
  readonly permits?: number | undefined;
}

/** The three shapes of lock, plus the RW lock's two modes. */
export type LockKind = 'mutex' | 'read' | 'write' | 'semaphore';

/**
 * A held lock. Dispose it (`await using handle = await lock.acquire()`) or call `release()`.
 */
export interface LockHandle extends AsyncDisposable {
  /** The name the lock was created with. */
  readonly name: string;
  /** Which primitive/mode this handle holds. */
  readonly kind: LockKind;
  /**
   * Strictly increasing per lock name across holders, releases, expiries, kills and client
   * restarts. Pass it to the protected resource and have it reject writes with a smaller
   * token than one it has already seen.
   */
  readonly fencingToken: bigint;
  /**
   * Aborts (reason: `LockLostError`) when the backend can no longer vouch for the lock.
   * Not aborted by a normal `release()`.
   */
  readonly signal: AbortSignal;
  /**
   * Until when the backend vouches for the hold, in `Date.now()` milliseconds: the end of the
   * current lease on lease backends (moved on by every extension), `Infinity` on session
   * backends (the hold lasts as long as the session), and `0` once the handle is released or
   * its signal has aborted.
   */
  readonly validUntil: number;
  /**
   * Extends the lease now, to `ms` from now (default: this hold's lease length); with `ms`,
   * later automatic extensions use that length too. Resolves `true` once the server has
   * confirmed it; `false` if the hold was already released or lost (then `signal` has
   * aborted). Rejects with `BackendUnavailableError` when the server cannot be reached (the
   * lease is unchanged), and with `InvalidArgumentError`, before any I/O, for a bad `ms` or
   * on a backend whose lease is not chosen per hold (`capabilities.minLeaseMs` is `Infinity`).
   */
  extend(ms?: number): Promise<boolean>;
  /**
   * Releases the lock. Idempotent (every call returns the first call's result); never
   * releases another holder's lock; never throws because the lock was lost. Resolves `true`
   * if the lock was still ours up to the release, `false` if it had been lost (so work done
   * since the loss can be rolled back).
   */
  release(): Promise<boolean>;
  /**
   * Hands the hold over (`capabilities.handOver`; docs/contract.md, "Hand-over"): returns an
   * opaque token that the primitive's `resume(token)` turns into a handle of the same hold
   * elsewhere. Synchronous, no I/O. Then this handle has let go: it no longer extends or
   * watches the hold, `close()` does not release it, `validUntil` is `0`, `release()` resolves
   * `false` without I/O, and `signal` does NOT abort (handed on, not lost). Throws
   * `InvalidArgumentError` without `capabilities.handOver` or for a released/exported handle,
   * and the handle's `LockLostError` when it was lost. */
  export(): string;
}

/** A mutual-exclusion lock. Not reentrant: a second acquire waits like any other client. */
export interface IDistributedLock extends LockAdministration {
  readonly name: string;
  /** Waits up to `timeout` (default forever); rejects with `LockTimeoutError` on timeout. */
  acquire(options?: AcquireOptions): Promise<LockHandle>;
  /** Waits up to `timeout` (default 0: one attempt); resolves `null` on timeout. */
  tryAcquire(options?: AcquireOptions): Promise<LockHandle | null>;
  /** Acquires, runs `fn`, releases (also when `fn` throws). */
  withLock<T>(fn: (handle: LockHandle) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
  /**
   * Continues a hold exported by `handle.export()` of this lock, with the same fencing token.
   * `InvalidArgumentError` before any I/O for a garbled token, one of another backend,
   * namespace, lock or kind, or without `capabilities.handOver`; `LockLostError` when the hold
   * is no longer that owner's (released, expired, taken over, or already resumed: once only).
   */
  resume(token: string): Promise<LockHandle>;
}

/** Many readers XOR one writer. A waiting writer blocks new readers (writer preference). */
export interface IReadWriteLock extends LockAdministration {
  readonly name: string;
  acquireRead(options?: AcquireOptions): Promise<LockHandle>;
  tryAcquireRead(options?: AcquireOptions): Promise<LockHandle | null>;
  withReadLock<T>(fn: (handle: LockHandle) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
  acquireWrite(options?: AcquireOptions): Promise<LockHandle>;
  tryAcquireWrite(options?: AcquireOptions): Promise<LockHandle | null>;
  withWriteLock<T>(
    fn: (handle: LockHandle) => Promise<T> | T,
    options?: AcquireOptions,
  ): Promise<T>;
  /** Like `IDistributedLock.resume`, for a read or a write hold of this lock. */
  resume(token: string): Promise<LockHandle>;
}

/** At most `maxCount` holders at once. */
export interface ISemaphore extends LockAdministration {
  readonly name: string;
  readonly maxCount: number;
  acquire(options?: SemaphoreAcquireOptions): Promise<LockHandle>;
  tryAcquire(options?: SemaphoreAcquireOptions): Promise<LockHandle | null>;
  withPermit<T>(
    fn: (handle: LockHandle) => Promise<T> | T,
    options?: SemaphoreAcquireOptions,
  ): Promise<T>;
  /** Like `IDistributedLock.resume`, for a hold of this semaphore (same `maxCount`). */
  resume(token: string): Promise<LockHandle>;
}

/**
 * Options of `provider.createElection()`. Unknown keys are an `InvalidArgumentError`.
 */
export interface ElectionOptions {
  /**
   * A label for this participant, reported by `election.leader()` while it leads (for logs
   * and dashboards; it is not an identity check).
   * @defaultValue `<hostname>:<pid>`
   */
  readonly owner?: string | undefined;
  /**
   * For `events()`: after a term ends because the lock was lost (not after `resign()` or
   * `close()`), campaign again. Off: the iteration ends after that term's `lost` event.
   * @defaultValue false
   */
  readonly recampaign?: boolean | undefined;
}

/**
 * Options of `election.campaign()`: the acquire options. `timeout` defaults to `Infinity`
 * (campaign until elected); on timeout the campaign rejects with `LockTimeoutError`.
 */
export type CampaignOptions = AcquireOptions;

/** Options of `election.events()`. Unknown keys are an `InvalidArgumentError`. */
export interface ElectionEventsOptions {
  /**
   * Ends the iteration: a pending campaign is withdrawn, a current term is resigned at once —
   * also while the loop body still works on it (its `signal` aborts) — and its `lost` event
   * is still delivered; then the iteration completes without an error.
   */
  readonly signal?: AbortSignal | undefined;
}

/** Why a term ended. */
export type LeadershipEnd = 'lock-lost' | 'resigned' | 'provider-closed';

/**
 * One term of leadership: this participant leads from `campaign()` resolving until
 * `signal` aborts. Dispose it (`await using leadership = await election.campaign()`) or
 * call `resign()`.
 */
export interface Leadership extends AsyncDisposable {
  /** This participant's owner label. */
  readonly owner: string;
  /**
   * The term's epoch: the fencing token of the election's lock, so strictly increasing from
   * term to term, across participants, processes and restarts. Send it with every write the
   * leader makes; a resource that refuses epochs below the largest it has seen refuses a
   * stale leader's late writes.
   */
  readonly epoch: bigint;
  /**
   * Aborts, with a `LockLostError`, when the term ends: the lock was lost (the reason is the
   * lock's own `LockLostError`), `resign()` was called, or the provider was closed. It aborts
   * BEFORE the lock is released, so work stopped by it ends before a successor can be elected.
   */
  readonly signal: AbortSignal;
  /**
   * Ends the term: aborts `signal`, then releases the lock, so a waiting campaigner is
   * elected. Idempotent; never throws.
   */
  resign(): Promise<void>;
}

/** The leader as far as the asking provider knows it. */
export interface LeaderInfo {
  readonly owner: string;
  readonly epoch: bigint;
}

/** What `election.events()` yields: every `elected` is followed by its term's `lost`. */
export type ElectionEvent =
  | { readonly type: 'elected'; readonly leadership: Leadership }
  | {
      readonly type: 'lost';
      readonly leadership: Leadership;
      /** Why the term ended. */
      readonly cause: LeadershipEnd;
      /** The `LockLostError` that `leadership.signal` aborted with. */
      readonly reason: unknown;
    };

/**
 * Leader election on the provider's mutex: at most one participant leads at a time, per
 * name, on every backend (see docs/leader-election.md). An election named `n` is the
 * mutex named `election:n`.
 */
export interface IElection {
  /** The election's name, exactly as given. */
  readonly name: string;
  /** This participant's owner label. */
  readonly owner: string;
  /**
   * Waits until this participant is elected (default: forever) and resolves its term.
   * Rejects like an acquire: `LockTimeoutError` after `timeout`, `signal.reason` on abort,
   * `LockAbortedError` when the provider is closed. Not reentrant: a second campaign of a
   * participant that leads waits until its term ends.
   */
  campaign(options?: CampaignOptions): Promise<Leadership>;
  /** The term this participant holds now (its signal not aborted), or `null`. */
  current(): Leadership | null;
  /**
   * Who leads, as far as this provider knows: the owner label and epoch of the live term
   * of any participant created by this same provider, or `null` when none of them leads —
   * which does NOT mean nobody leads (another process may). See docs/adr/0010.
   */
  leader(): Promise<LeaderInfo | null>;
  /**
   * Campaigns and reports each term: `elected`, then `lost` when it ends. With
   * `recampaign`, campaigns again after a lost lock. Breaking out of the loop resigns the
   * current term. Ends without an error when `options.signal` aborts or the provider closes.
   */
  events(options?: ElectionEventsOptions): AsyncIterableIterator<ElectionEvent>;
}

/** Creates locks on one backend. Swap providers without touching call sites. */
export interface ILockProvider extends AsyncDisposable {
  /** Backend id: "memory", "redis", "postgres", "mysql", "zookeeper", "file", … */
  readonly backend: string;
  readonly capabilities: Capabilities;
  /** Any string is a valid, case-sensitive name. Primitives of different kinds never share a key. */
  createLock(name: string): IDistributedLock;
  createReadWriteLock(name: string): IReadWriteLock;
  /** `maxCount` is an integer in [1, 2^31-1]. */
  createSemaphore(name: string, maxCount: number): ISemaphore;
  /**
   * A participant in the leader election `name`, built on the mutex `election:<name>`.
   * Options are checked here, before any I/O.
   */
  createElection(name: string, options?: ElectionOptions): IElection;
  /**
   * Ends waits (LockAbortedError) and leaderships, releases every held handle, closes what
   * the provider owns.
   */
  close(): Promise<void>;
}
