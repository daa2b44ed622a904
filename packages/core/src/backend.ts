/**
 * The narrow interface a backend implements. `LockProvider` (lock-provider.ts) wraps a
 * backend and owns every shared policy: argument checks, deadlines, abort, the retry loop
 * with notified waiting and a safety poll, grant-vs-abort races, handle bookkeeping, lease
 * extension and expiry, lost-signal plumbing and diagnostics. A backend reads like the
 * algorithm for its server and nothing else.
 *
 * Time values named `…At`/`validUntil` are on the `performance.now()` clock (monotonic ms).
 *
 * Who meets each semantic of the contract (docs/contract.md):
 * 1. Mutual exclusion — BACKEND (`tryAcquire`/`release` on the server).
 * 2. Not reentrant — core never stacks a grant; BACKEND must stop servers that do
 *    (PostgreSQL/MySQL session locks) from stacking two grants on one connection.
 * 3. Timeouts — CORE (validation, deadline, timer; it rejects only after the attempt in
 *    flight has settled and a late grant is released); a server-side wait must honour
 *    `wait.deadline`/`wait.signal` and settle only once it has left the server's queue.
 * 4. Abort — CORE (caller reason, pre-aborted check, late-grant release); BACKEND undoes a
 *    grant it cannot return (e.g. granted as the cancel arrived).
 * 5. Release — CORE (idempotence, result); BACKEND (ownership check, never a blind delete).
 * 6. Lost signal — CORE (signal, lease expiry, failed/false extensions); BACKEND reports
 *    session loss through `monitor` and declares `capabilities.lostDetectionMs`.
 * 7. Leases — CORE checks the per-acquire `leaseMs`/`autoExtend` and `extend(ms)` against
 *    `capabilities.minLeaseMs` and schedules extension every `durationMs/3`; BACKEND honours
 *    `request.leaseMs`/`request.autoExtend`, sets `grant.lease` and implements `extend`.
 * 8. Fencing tokens — BACKEND (a counter that never goes back; document its source).
 * 9. Notified waiting — CORE's loop; BACKEND provides `watch` or waits server-side.
 * 10. Fairness — BACKEND (FIFO where the server queues; writer preference always; a waiting
 *     weighted semaphore request is not overtaken by later ones).
 * 11. Names — CORE validates and provides the versioned key helpers (keys.ts); BACKEND
 *     uses them and applies `request.namespace`.
 * 12. Errors — CORE's classes; BACKEND wraps client failures in `BackendUnavailableError`
 *     (with `cause`) and never throws from a timer or callback.
 * 13. No leaks — CORE clears its timers and releases handles on close; BACKEND closes
 *     what it owns (never an injected client) and leaves no server state behind.
 * 14. Observability — CORE publishes every diagnostics_channel event.
 *
 * @module
 */
import type { BackendLockState } from './lock-state.js';
import type { Capabilities, LockKind } from './types.js';

/** One acquire request, as the backend sees it. */
export interface LockRequest {
  /** The caller's name, exactly as given (any string). */
  readonly name: string;
  /** The provider's namespace ('' when none); map (namespace, kind family, name) to keys. */
  readonly namespace: string;
  readonly kind: LockKind;
  /** Permits for a semaphore; 1 for a mutex or writer; `Infinity` for a reader. */
  readonly maxCount: number;
  /**
   * Semaphore permits this request takes at once, all or nothing (1 unless the caller asked
   * for more, which core allows only with `capabilities.weightedPermits`). Core has checked
   * `1 <= permits <= maxCount`. `undefined` means 1.
   */
  readonly permits?: number | undefined;
  /**
   * The caller's lease length for this hold (core allows it only with a finite
   * `capabilities.minLeaseMs` and has checked it); `undefined`: the backend's default.
   */
  readonly leaseMs?: number | undefined;
  /** The caller's `autoExtend` for this hold (same rule); `undefined`: the backend's default. */
  readonly autoExtend?: boolean | undefined;
  /**
   * The provider's owner label (`owner` option, default `<hostname>:<pid>`), set by core on
   * every request. Backends record it with the hold, with the grant time, for `inspect()`.
   */
  readonly owner?: string | undefined;
}

/** A backend's own part of a hand-over token (see `LockBackend.exportGrant`). */
export type GrantData = Readonly<Record<string, string | number | boolean>>;

/** What a backend returns when it has granted a lock. Extend it with backend state. */
export interface Grant {
  readonly fencingToken: bigint;
  /** Set by lease backends; core extends and expires the lease from it. */
  readonly lease?: LeaseInfo | undefined;
}

/** Lease bookkeeping for TTL backends. */
export interface LeaseInfo {
  /**
   * Full lease length in ms. With `autoExtend`, core extends first when two thirds of it
   * remain (at `validUntil - durationMs * 2 / 3`), then `durationMs / 3` after each extension.
   */
  readonly durationMs: number;
  /** Until when (performance.now() ms) the backend vouches for the grant. */
  readonly validUntil: number;
  /** Extend automatically while the handle is alive. */
  readonly autoExtend: boolean;
}

/**
 * How long the caller is prepared to wait, for backends whose server can queue them. Call
 * `waiting()` as a method of the context (`wait.waiting()`), not detached.
 */
export interface WaitContext {
  /** Aborts when the caller gives up (timeout, its own signal, provider close). */
  readonly signal: AbortSignal;
  /**
   * performance.now() ms at which the caller gives up; `Infinity` for none. `-Infinity`
   * means a single attempt (timeout 0): the caller will NOT wait, so leave no waiting state
   * behind (queue node, writer-waiting marker). Any other value means core will retry
   * (after `watch`) until the deadline, so a backend may register the caller as waiting.
   */
  readonly deadline: number;
  /**
   * Backends that wait server-side call this once the caller is queued, so core can publish
   * `lockkit:wait` (core publishes it itself for backends that wait through `watch`).
   */
  readonly waiting: () => void;
}

/** A subscription to "this lock may have become free" notifications. */
export interface ReleaseWatch {
  /**
   * Resolves at the first notification since the watch began or since the previous
   * `next()` resolved (notifications are latched, so none is lost between an attempt and
   * the wait). May reject with `signal.reason` when `signal` aborts.
   */
  next(signal: AbortSignal): Promise<void>;
  close(): void;
}

/** The primitive a backend implements. */
export interface LockBackend<G extends Grant = Grant> {
  /** Backend id, e.g. "redis". */
  readonly backend: string;
  readonly capabilities: Capabilities;
  /**
   * Safety poll while watching, or the retry interval for backends without `watch` whose
   * `tryAcquire` does not wait. Core adds ±20 % jitter.
   */
  readonly pollIntervalMs: number;

  /**
   * One attempt. A backend whose server queues waiters (Postgres, ZooKeeper, memory) may
   * wait here until granted, `wait.deadline`, or `wait.signal`; others return `null` at once
   * and implement {@link watch}. Core releases a grant that arrives after the caller gave
   * up, and rejects the caller only once this promise has settled (and that release has),
   * or 250 ms after `wait.signal` aborted if it has not: so end promptly when the signal
   * aborts, and settle only after the server no longer queues the wait. A grant the backend cannot return (the server granted after a cancel)
   * is the backend's to undo, before settling. An attempt that cannot reach the server (or a quorum) throws
   * `BackendUnavailableError` within `capabilities.unavailableMs`; core applies the outage
   * policy (docs/contract.md): a single try fails with it, a waiting acquire retries until
   * its deadline and then fails with it.
   */
  tryAcquire(request: LockRequest, wait: WaitContext): Promise<G | null>;

  /**
   * Optional notified waiting: subscribe BEFORE core's next attempt (subscribe-then-retry),
   * so a release between the failed attempt and the wait is not missed. A watch that rejects
   * with `BackendUnavailableError` is treated like an attempt that could not reach the server
   * (core polls and tries `watch` again after the next successful attempt); any other
   * rejection fails the acquire.
   */
  watch?(request: LockRequest): ReleaseWatch | Promise<ReleaseWatch>;

  /**
   * Ownership-checked release. Resolves true if the grant was still held (and is now
   * released), false if it was no longer ours. Never touches another holder's lock.
   */
  release(request: LockRequest, grant: G): Promise<boolean>;

  /**
   * Lease backends: extend the lease to `durationMs` from now (the grant's
   * `lease.durationMs`, or the length the holder passed to `handle.extend(ms)`; backends whose
   * `capabilities.minLeaseMs` is `Infinity` are only ever asked for their own length).
   * Resolves the new `validUntil`, or `false` when the grant is no longer ours. Rejects on a
   * transport failure (core keeps trying until the current lease runs out).
   */
  extend?(request: LockRequest, grant: G, durationMs: number): Promise<number | false>;

  /**
   * Session backends: watch the grant's session/connection/node and call `lose` when it is
   * gone. Returns the function that stops watching (called on release and on loss).
   */
  monitor?(
    request: LockRequest,
    grant: G,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void;

  /**
   * Hand-over (`capabilities.handOver`): what another provider needs to continue this grant,
   * as JSON-safe values (the fencing token and the request travel with it in core's token).
   * Called synchronously when the handle is exported: from then on this provider never
   * extends, monitors or releases the grant, so free any local state it keeps for it.
   */
  exportGrant?(request: LockRequest, grant: G): GrantData;

  /**
   * Hand-over: checks on the server that the hold described by `data` (from `exportGrant`,
   * possibly forged) is still that owner's, and continues it as this provider's grant with a
   * lease of `durationMs` (the length the exporter extended it to), taking it from the exported
   * identity so that a second resume of the same data resolves `null` (a token resumes once).
   * Resolves `null` when the hold is gone or not that owner's; rejects with `BackendUnavailableError`
   * when the server cannot be reached. `fencingToken` is the exported one (check it as well).
   */
  resumeGrant?(
    request: LockRequest,
    data: GrantData,
    fencingToken: bigint,
    durationMs: number | undefined,
  ): Promise<G | null>;

  /**
   * Reads one lock's holds (and its waiters, where the server registers them) for
   * `lock.inspect()`. `request.kind` is `write` for a read-write lock (report its readers and
   * writer), and `request.maxCount` is the caller's. Reads only: never changes the lock.
   */
  inspect?(request: LockRequest): Promise<BackendLockState>;

  /**
   * The operator's break (`lock.forceRelease()`): ends every current hold of the lock so that
   * each holder's `monitor` or next extension reports the loss within
   * `capabilities.lostDetectionMs`, its release resolves `false`, and the fencing counter is
   * untouched (the next grant's token is higher). Leaves waiters queued. Resolves the number
   * of holds broken. Same `request` convention as {@link inspect}.
   */
  forceRelease?(request: LockRequest): Promise<number>;

  /**
   * Closes what the backend owns (never an injected client). Called once, after handles are
   * released and after every attempt and release core started has settled.
   */
  close(): Promise<void>;
}
