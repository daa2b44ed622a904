/**
 * When a marker counts as abandoned. A holder refreshes its marker's mtime (the heartbeat)
 * every `leaseMs / 3`; anyone may take over a marker whose mtime is more than `leaseMs` away
 * from their own wall clock. That comparison is the one place where wall clocks matter:
 * hosts sharing a directory must agree to well within `leaseMs / 3`.
 *
 * @module
 */

/** Staleness rule for one lock directory. */
export class Staleness {
  /** Lease length in ms (proper-lockfile's `stale`). */
  readonly leaseMs: number;
  /** Extra ms allowed on file systems that store whole (or even) seconds only. */
  #precisionSlackMs = 0;

  constructor(leaseMs: number) {
    this.leaseMs = leaseMs;
  }

  /** Records the directory's mtime resolution (probed once per provider). */
  setCoarseTimestamps(coarse: boolean): void {
    this.#precisionSlackMs = coarse ? 2000 : 0;
  }

  /**
   * True if a marker with this mtime is abandoned: older than the lease, or more than a lease
   * in the future (a clock that jumped back would otherwise pin it forever).
   */
  isStale(mtimeMs: number, wallNow: number = Date.now()): boolean {
    const age = wallNow - mtimeMs;
    return age > this.leaseMs + this.#precisionSlackMs || age < -this.leaseMs;
  }

  /** Wall-clock ms after which a marker with this mtime is stale. */
  staleAt(mtimeMs: number): number {
    return mtimeMs + this.leaseMs + this.#precisionSlackMs + 1;
  }
}
