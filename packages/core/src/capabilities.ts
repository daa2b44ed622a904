/**
 * What a backend can do, declared by the backend and read by callers and the conformance
 * suite (never a skip list of test names).
 */
export interface Capabilities {
  /** Locks are visible to other processes (false only for the in-memory provider). */
  readonly crossProcess: boolean;
  /** Holders hold a lease that is extended while the handle lives (Redis, file). */
  readonly leases: boolean;
  /**
   * The shortest lease, in ms, an acquire may ask for with `leaseMs` or `handle.extend(ms)`,
   * on a backend whose lease is chosen per hold (Redis). `Infinity` where it is not: then the
   * acquire options `leaseMs` and `autoExtend` and `handle.extend()` are an
   * `InvalidArgumentError` (session backends hold for as long as the session lives; the file
   * backend's lease length is the directory's staleness rule, which every contender applies
   * from its own provider options).
   */
  readonly minLeaseMs: number;
  /**
   * A semaphore acquire may take several permits at once (`{ permits: n }`), all or nothing.
   * Where false, `permits` other than 1 is an `InvalidArgumentError`.
   */
  readonly weightedPermits: boolean;
  /**
   * A held handle can be handed over to another provider or process: `handle.export()` gives
   * an opaque token, and the primitive's `resume(token)` there continues the same hold (same
   * fencing token). True where the hold is server state identified by an owner id, not a
   * connection or session (Redis, etcd). Where false, `export()` and `resume()` are an
   * `InvalidArgumentError` before any I/O.
   */
  readonly handOver: boolean;
  /**
   * `lock.inspect()` and `lock.forceRelease()` work (docs/contract.md, "Inspection and
   * force-release"). Absent or false: both reject with `InvalidArgumentError`.
   */
  readonly inspection?: boolean;
  /** Waiters are granted strictly in arrival order. */
  readonly fifo: boolean;
  /**
   * Upper bound, in ms, from the moment the backend's hold is broken (key deleted, session
   * killed) to `handle.signal` aborting.
   */
  readonly lostDetectionMs: number;
  /**
   * Upper bound, in ms, from a holder process dying (SIGKILL) to its lock being free for
   * others. Session backends free it when the server notices the connection is gone; lease
   * backends when the lease runs out.
   */
  readonly abandonedReleaseMs: number;
  /**
   * Upper bound, in ms, from a call on a server that cannot be reached (connection refused,
   * unknown host, authentication failure, no answer) to its `BackendUnavailableError`; also
   * bounds `release()` (which then resolves `false`) and `close()` in an outage.
   */
  readonly unavailableMs: number;
}
