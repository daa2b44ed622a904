import type { BackendId } from '../backends/backend-ids.js';

/** Gives a held lock back. */
export type Release = () => Promise<unknown>;

/** One client of a library (its connections), as one process would hold it. */
export interface LockClient {
  /** Takes the lock `name`, waiting for it when the library can wait. */
  acquire(name: string): Promise<Release>;
  /** Closes what the client opened. */
  close(): Promise<void>;
  /**
   * Called before each of this client's uncontended slices, and `leave` after it: for a
   * client whose setting is process-wide (a diagnostics subscriber), so that the other
   * contenders' slices run without it.
   */
  enter?(): void;
  leave?(): void;
}

/** A library (or a raw client loop) measured on one backend's servers. */
export interface Contender {
  readonly backend: BackendId;
  /** e.g. `lockkit`, `redlock@5.0.0-beta.2`, `raw pg_advisory_lock`. */
  readonly library: string;
  /** Whether this is lockkit (highlighted in the chart). */
  readonly lockkit: boolean;
  /**
   * `true` when `acquire` waits for a held lock; otherwise why not (the handoff and worker
   * measurements are then skipped).
   */
  readonly waits: true | string;
  /** `true` when 10 000 held locks make sense for it; otherwise why not. */
  readonly holdsMany: true | string;
  /**
   * Measured uncontended only, beside the plain row (a variant whose cost is the point, such
   * as lockkit with OpenTelemetry on); its other figures are left out without a note.
   */
  readonly uncontendedOnly?: boolean;
  /**
   * lockkit with options other than the defaults (what a user can switch to): measured in the
   * bench beside the plain row, left out of the scale run.
   */
  readonly variant?: boolean;
  /** Opens a client. */
  open(): Promise<LockClient>;
}
