/**
 * The shapes of `lock.inspect()` and `lock.forceRelease()` (docs/contract.md, "Inspection and
 * force-release").
 *
 * @module
 */
/** One hold of a lock, as the server records it. */
export interface LockHolder {
  /** `mutex`, `read`, `write` or `semaphore` (a `LockKind`). */
  readonly kind: 'mutex' | 'read' | 'write' | 'semaphore';
  /** The hold's fencing token, where the server keeps it with the hold. */
  readonly fencingToken: bigint | undefined;
  /** Semaphore permits this hold takes (1 for every other kind). */
  readonly permits: number;
  /**
   * The holding provider's `owner` label (default `<hostname>:<pid>`), where the server
   * keeps it; `undefined` for holds made by clients that did not record one.
   */
  readonly owner: string | undefined;
  /** When the hold was granted, in `Date.now()` ms, where the server keeps it. */
  readonly since: number | undefined;
  /**
   * Until when the hold lasts without another extension, in `Date.now()` ms: the lease's
   * end on lease backends, `Infinity` where the hold lasts as long as its session.
   */
  readonly validUntil: number;
}

/** What `inspect()` read from the server, at one moment. */
export interface LockState {
  /** The lock's name, exactly as given. */
  readonly name: string;
  /** `mutex`, `read-write` or `semaphore`. */
  readonly primitive: 'mutex' | 'read-write' | 'semaphore';
  /** Whether anyone holds it (for a semaphore: at least one permit is taken). */
  readonly held: boolean;
  readonly holders: readonly LockHolder[];
  /**
   * How many callers wait for it, where the server knows (`undefined` where waiters are not
   * registered on the server, e.g. Redis, whose waiters wait for a notification).
   */
  readonly waiting: number | undefined;
  /** Semaphores: `maxCount` minus the permits held (never below 0); `undefined` otherwise. */
  readonly permitsFree: number | undefined;
}

/** Inspection and the operator's break, on every primitive. */
export interface LockAdministration {
  /**
   * Reads who holds the lock now: holders with token, permits, owner and since; waiters
   * where the server knows them. One consistent reading where the server allows it; it may
   * be stale by the time it resolves. Rejects with `BackendUnavailableError` in an outage.
   */
  inspect(): Promise<LockState>;
  /**
   * The operator's break: ends every current hold of this lock (all readers and the writer
   * of a RW lock, every permit of a semaphore), whoever holds it. Each broken holder's
   * `signal` aborts with `LockLostError` within `capabilities.lostDetectionMs`, its late
   * `release()` resolves `false`, and the next holder's fencing token is higher than theirs.
   * Waiters are not touched: the first of them is granted. Resolves how many holds were
   * broken. Not a way to unlock your own hold (use `release()`).
   */
  forceRelease(): Promise<number>;
}

/** A backend's reading of one lock (core adds the name, `held` and `permitsFree`). */
export interface BackendLockState {
  readonly holders: readonly LockHolder[];
  readonly waiting: number | undefined;
}
