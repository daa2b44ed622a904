import type { Grant, LockBackend, LockRequest } from './backend.js';
import { type LockEvent, type LockLostReason, publish } from './diagnostics.js';
import { LockLostError } from './errors/lock-lost-error.js';
import { exportToken, notExportable } from './hand-over.js';
import { type Deadline, DeadlineTimer, now } from './timing.js';
import type { LockHandle, LockKind } from './types.js';
import { assertLeaseControl, validateLeaseMs } from './validation.js';

/** Every handle's next lease extension, on one timer (never keeping the process alive); a
 * hold that ends before it only adds and deletes an entry; sweeps at most every 10 ms. */
const extensions = new DeadlineTimer({ keepAlive: false, resolutionMs: 10 });

/** The lock fields of a handle's diagnostics events. */
type HandleEvent = Required<
  Pick<LockEvent, 'backend' | 'name' | 'kind' | 'handle' | 'fencingToken'>
>;

/** Reads a handle's request and grant (set by ManagedHandle's static block). */
let entryOf: (handle: LockHandle) => { request: LockRequest; grant: Grant } | undefined;

/** The backend grant behind a handle created by core, for backend test hooks (fault
 * injection: "delete this grant's key"); application code never needs it. */
export function grantOf<G extends Grant = Grant>(
  handle: LockHandle,
): { request: LockRequest; grant: G } {
  const entry = entryOf(handle);
  if (!entry) throw new TypeError('Not a handle created by a lockkit provider');
  return entry as { request: LockRequest; grant: G };
}

/**
 * A held lock: owns its lost signal, lease extension and expiry timers, session monitor, the
 * idempotent, ownership-checked release and export. The only handle implementation.
 */
export class ManagedHandle<G extends Grant> implements LockHandle {
  readonly name: string;
  readonly kind: LockKind;
  readonly fencingToken: bigint;
  readonly #backend: LockBackend<G>;
  readonly #request: LockRequest;
  readonly #grant: G;
  // Created on first read of `signal` (most handles are never asked): saves an allocation.
  #controller: AbortController | undefined;
  #lostReason: LockLostError | undefined;
  /** Called once the handle is released (the provider forgets it). */
  readonly #onDone: () => void;
  #release: Promise<boolean> | undefined;
  #stopMonitor: (() => void) | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  #nextExtension: Deadline | undefined;
  #lastExtendError: unknown;
  #validUntil = Number.POSITIVE_INFINITY;
  /** The lease length extensions renew to (changed by `extend(ms)`). */
  #durationMs = 0;
  /** An extension in flight (automatic or asked for); at most one at a time. */
  #extending: Promise<unknown> | undefined;

  constructor(backend: LockBackend<G>, request: LockRequest, grant: G, onDone: () => void) {
    this.#backend = backend;
    this.#request = request;
    this.#grant = grant;
    this.#onDone = onDone;
    this.name = request.name;
    this.kind = request.kind;
    this.fencingToken = grant.fencingToken;
    this.#start();
  }

  static {
    // Private fields, not a WeakMap entry per handle (a set costs more than the constructor).
    entryOf = (handle) =>
      #request in handle ? { request: handle.#request, grant: handle.#grant } : undefined;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#lostReason) this.#controller.abort(this.#lostReason);
    }
    return this.#controller.signal;
  }

  get validUntil(): number {
    if (this.#isDone()) return 0;
    const until = this.#validUntil;
    return until === Number.POSITIVE_INFINITY ? until : Date.now() + (until - now());
  }

  async extend(ms?: number): Promise<boolean> {
    if (ms === undefined) assertLeaseControl('extend()', this.#backend);
    const durationMs =
      ms === undefined ? this.#durationMs : validateLeaseMs(ms, this.#backend, 'extend(ms)');
    // One extension at a time: this one starts when the one in flight has settled.
    const run = (this.#extending ?? Promise.resolve()).then(
      () => this.#extendNow(durationMs),
      () => this.#extendNow(durationMs),
    );
    this.#extending = run;
    return run.finally(() => {
      if (this.#extending === run) this.#extending = undefined;
    });
  }

  release(): Promise<boolean> {
    this.#release ??= this.#doRelease();
    return this.#release;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release().then(() => undefined);
  }

  /** Hands the hold over (hand-over.ts): this handle lets go of it without releasing it. */
  export(): string {
    if (this.#isDone()) throw notExportable(this.name, this.#lostReason);
    const duration = this.#grant.lease ? this.#durationMs : undefined;
    const token = exportToken(this.#backend, this.#request, this.#grant, duration);
    this.#stop();
    this.#release = Promise.resolve(false); // done: validUntil 0, no extension, no release
    publish('release', () => ({ ...this.#event(), stillHeld: false })); // this process let go
    this.#onDone();
    return token;
  }

  /** Aborts the signal with LockLostError (once) and stops background work. `why` is the
   * error's text, `reason` its category on `lockkit:lost` (a backend's report: `revoked`). */
  lose(why: string, cause?: unknown, reason: LockLostReason = 'revoked'): void {
    if (this.#release !== undefined || this.#lostReason) return;
    const error = new LockLostError(this.name, why, cause);
    this.#stop();
    publish('lost', () => ({ ...this.#event(), reason, error }));
    this.#lostReason = error;
    this.#controller?.abort(error);
  }

  #start(): void {
    const { lease } = this.#grant;
    if (lease) {
      // An extended lease arms its expiry timer only from an extension's start until one
      // succeeds (most holds end before their first, never arming it); a fixed one now.
      this.#validUntil = lease.validUntil;
      this.#durationMs = lease.durationMs;
      // The first extension is due when two thirds of the lease remain (off validUntil).
      if (lease.autoExtend && this.#backend.extend) {
        this.#extendAt(lease.validUntil - (lease.durationMs * 2) / 3);
      } else this.#armExpiry(lease.validUntil);
    }
    if (this.#backend.monitor) {
      this.#stopMonitor = this.#backend.monitor(this.#request, this.#grant, (reason, cause) =>
        this.lose(reason, cause),
      );
    }
  }

  #armExpiry(validUntil: number): void {
    this.#validUntil = validUntil;
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = setTimeout(
      () => {
        const why = this.#lastExtendError
          ? 'the lease ran out while extensions were failing'
          : 'the lease ran out before it was extended';
        this.lose(why, this.#lastExtendError, 'expired');
      },
      Math.max(0, validUntil - now()),
    );
    this.#expiryTimer.unref();
  }

  #extendAt(at: number): void {
    if (this.#nextExtension) extensions.delete(this.#nextExtension);
    this.#nextExtension = extensions.add(at, () => this.#extend());
  }

  #extend(): void {
    if (this.#extending) return; // an asked-for extension reschedules when it ends
    const run = this.#autoExtend();
    this.#extending = run;
    void run.then(() => {
      if (this.#extending === run) this.#extending = undefined;
    });
  }

  async #autoExtend(): Promise<void> {
    const lease = this.#grant.lease;
    if (!lease || !this.#backend.extend || this.#isDone()) return;
    if (this.#stalledPastLease()) return;
    // Until an extension succeeds, the lease runs out at #validUntil (a hung extension too).
    if (!this.#expiryTimer) this.#armExpiry(this.#validUntil);
    let next = this.#durationMs / 3;
    try {
      if (!(await this.#renew(this.#durationMs))) return;
    } catch (error) {
      if (this.#isDone()) return;
      this.#lastExtendError = error;
      next = Math.max(25, this.#durationMs / 10);
    }
    this.#extendAt(now() + next);
  }

  /** `handle.extend()`: one extension now, then automatic ones (if any) from its end. */
  async #extendNow(durationMs: number): Promise<boolean> {
    if (this.#isDone() || this.#stalledPastLease()) return false;
    if (this.#nextExtension) extensions.delete(this.#nextExtension);
    const auto = this.#grant.lease?.autoExtend === true;
    let next = durationMs / 3;
    try {
      if (!(await this.#renew(durationMs))) return false;
      this.#durationMs = durationMs;
      if (!auto) this.#armExpiry(this.#validUntil);
      return true;
    } catch (error) {
      if (this.#isDone()) throw error;
      this.#lastExtendError = error;
      // The lease is unchanged: it still runs out at #validUntil unless a retry succeeds.
      if (!this.#expiryTimer) this.#armExpiry(this.#validUntil);
      next = Math.max(25, this.#durationMs / 10);
      throw error;
    } finally {
      if (auto && !this.#isDone()) this.#extendAt(now() + next);
    }
  }

  /** True (and the hold is lost) when this process stalled past the lease. */
  #stalledPastLease(): boolean {
    if (now() < this.#validUntil) return false;
    // The process was stalled past the lease (GC, SIGSTOP, a blocked loop): someone may
    // hold it now, so extending would be a lie even if the server still had our key.
    this.lose('the lease ran out before it was extended', this.#lastExtendError, 'expired');
    return true;
  }

  /**
   * One backend extension to `durationMs`: true once confirmed (the lease's end moved on),
   * false if the hold is gone (then lost) or was let go of meanwhile; rejects on a failure.
   */
  async #renew(durationMs: number): Promise<boolean> {
    const extend = this.#backend.extend as NonNullable<LockBackend<G>['extend']>;
    let validUntil: number | false;
    try {
      validUntil = await extend.call(this.#backend, this.#request, this.#grant, durationMs);
    } catch (error) {
      if (!this.#isDone()) publish('extend', () => ({ ...this.#event(), ok: false, error }));
      throw error;
    }
    if (this.#isDone()) return false;
    publish('extend', () => ({ ...this.#event(), ok: validUntil !== false }));
    if (validUntil === false) {
      this.lose('the lease is no longer ours (expired or taken by another holder)');
      return false;
    }
    this.#lastExtendError = undefined;
    this.#validUntil = validUntil;
    clearTimeout(this.#expiryTimer); // the next extension arms it again
    this.#expiryTimer = undefined;
    return true;
  }

  #isDone(): boolean {
    return this.#release !== undefined || this.#lostReason !== undefined;
  }

  #stop(): void {
    clearTimeout(this.#expiryTimer);
    if (this.#nextExtension) extensions.delete(this.#nextExtension);
    this.#stopMonitor?.();
    this.#stopMonitor = undefined;
  }

  async #doRelease(): Promise<boolean> {
    const wasLost = this.#lostReason !== undefined;
    this.#stop();
    let held = false;
    try {
      held = await this.#backend.release(this.#request, this.#grant);
    } catch (error) {
      // The outcome is unknown: report it as lost (the caller must assume it may have been).
      if (!this.#lostReason) {
        const lost = new LockLostError(this.name, 'release failed', error);
        publish('lost', () => ({ ...this.#event(), reason: 'release-failed', error: lost }));
        this.#lostReason = lost;
        this.#controller?.abort(lost);
      }
    }
    const stillHeld = held && !wasLost;
    publish('release', () => ({ ...this.#event(), stillHeld }));
    this.#onDone();
    return stillHeld;
  }

  #event(): HandleEvent {
    return {
      backend: this.#backend.backend,
      name: this.name,
      kind: this.kind,
      handle: this,
      fencingToken: this.fencingToken,
    };
  }
}
