/**
 * A writer's gate between its first attempt and core's `watch()` call. Core makes one
 * attempt, then (if the caller will wait) subscribes and tries again; a writer that let go of
 * the gate in between would let new readers slip in ahead of it. So the gate is parked here
 * until the watch adopts it, and released if no watch comes (deadline reached at once, or
 * the caller aborted) within a short grace period.
 *
 * @module
 */
import type { LockRequest } from '@lockkit/core/backend';

interface Parked {
  readonly gate: string;
  readonly timer: NodeJS.Timeout;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

/** Gates parked per request. `release` gives a gate back (ownership-checked). */
export class ParkedGates {
  readonly #parked = new Map<LockRequest, Parked>();
  readonly #release: (request: LockRequest, gate: string) => void;
  readonly #graceMs: number;

  constructor(release: (request: LockRequest, gate: string) => void, graceMs = 250) {
    this.#release = release;
    this.#graceMs = graceMs;
  }

  /** Parks `gate` for `request` until {@link adopt}, the grace period, or `signal` aborts. */
  park(request: LockRequest, gate: string, signal: AbortSignal): void {
    this.#drop(request);
    if (signal.aborted) {
      this.#release(request, gate);
      return;
    }
    const onAbort = (): void => this.#expire(request);
    const timer = setTimeout(onAbort, this.#graceMs);
    signal.addEventListener('abort', onAbort, { once: true });
    this.#parked.set(request, { gate, timer, signal, onAbort });
  }

  /** The parked gate of `request`, now owned by the caller (its watch). */
  adopt(request: LockRequest): string | undefined {
    return this.#drop(request)?.gate;
  }

  /** Releases every parked gate (provider close). */
  releaseAll(): void {
    for (const request of [...this.#parked.keys()]) this.#expire(request);
  }

  #expire(request: LockRequest): void {
    const parked = this.#drop(request);
    if (parked) this.#release(request, parked.gate);
  }

  #drop(request: LockRequest): Parked | undefined {
    const parked = this.#parked.get(request);
    if (!parked) return undefined;
    this.#parked.delete(request);
    clearTimeout(parked.timer);
    parked.signal.removeEventListener('abort', parked.onAbort);
    return parked;
  }
}
