import type { Grant, LockBackend, LockRequest } from './backend.js';
import { type LockLostReason, publish } from './diagnostics.js';
import { LockLostError } from './errors/lock-lost-error.js';
import { type Deadline, DeadlineTimer, now } from './timing.js';
import type { LockHandle, LockKind } from './types.js';

/**
 * Every handle's next lease extension, on one timer (never keeping the process alive). A hold
 * that ends before its first extension only adds and deletes an entry; a sweep runs at most
 * every 10 ms, so an extension may start up to 10 ms late (it is due at a third of the lease).
 */
const extensions = new DeadlineTimer({ keepAlive: false, resolutionMs: 10 });

/** Reads a handle's request and grant (set by ManagedHandle's static block). */
let entryOf: (handle: LockHandle) => { request: LockRequest; grant: Grant } | undefined;

/**
 * The backend grant behind a handle created by core. For backend test hooks (fault
 * injection: "delete this grant's key"); application code never needs it.
 */
export function grantOf<G extends Grant = Grant>(
  handle: LockHandle,
): { request: LockRequest; grant: G } {
  const entry = entryOf(handle);
  if (!entry) throw new TypeError('Not a handle created by a lockkit provider');
  return entry as { request: LockRequest; grant: G };
}

/**
 * A held lock: owns its lost signal, lease extension and expiry timers, session monitor and
 * the idempotent, ownership-checked release. The only handle implementation; backends never
 * write one.
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
    // Private fields instead of a WeakMap entry per handle (a WeakMap set costs more than
    // the rest of the constructor).
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

  release(): Promise<boolean> {
    this.#release ??= this.#doRelease();
    return this.#release;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release().then(() => undefined);
  }

  /**
   * Aborts the signal with LockLostError (once) and stops background work. `why` is the
   * error's text, `reason` its category on `lockkit:lost` (a backend's report is `revoked`).
   */
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
      // An extended lease arms its expiry timer only while an extension is due and not yet
      // confirmed (from the moment one starts until one succeeds): most holds end before
      // their first extension, so they never arm it. A fixed lease arms it now.
      this.#validUntil = lease.validUntil;
      // The first extension is due when two thirds of the lease remain (read off validUntil,
      // not the clock: the grant was measured just now).
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
    this.#nextExtension = extensions.add(at, () => void this.#extend());
  }

  async #extend(): Promise<void> {
    const lease = this.#grant.lease;
    const extend = this.#backend.extend;
    if (!lease || !extend || this.#isDone()) return;
    if (now() >= this.#validUntil) {
      // The process was stalled past the lease (GC, SIGSTOP, a blocked loop): someone may
      // hold it now, so extending would be a lie even if the server still had our key.
      this.lose('the lease ran out before it was extended', this.#lastExtendError, 'expired');
      return;
    }
    // Until an extension succeeds, the lease runs out at #validUntil (a hung extension too).
    if (!this.#expiryTimer) this.#armExpiry(this.#validUntil);
    let next = lease.durationMs / 3;
    try {
      const validUntil = await extend.call(this.#backend, this.#request, this.#grant);
      if (this.#isDone()) return;
      publish('extend', () => ({ ...this.#event(), ok: validUntil !== false }));
      if (validUntil === false) {
        this.lose('the lease is no longer ours (expired or taken by another holder)');
        return;
      }
      this.#lastExtendError = undefined;
      this.#validUntil = validUntil;
      clearTimeout(this.#expiryTimer); // the next extension arms it again
      this.#expiryTimer = undefined;
    } catch (error) {
      if (this.#isDone()) return;
      this.#lastExtendError = error;
      publish('extend', () => ({ ...this.#event(), ok: false, error }));
      next = Math.max(25, lease.durationMs / 10);
    }
    this.#extendAt(now() + next);
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

  #event(): {
    backend: string;
    name: string;
    kind: LockKind;
    handle: LockHandle;
    fencingToken: bigint;
  } {
    return {
      backend: this.#backend.backend,
      name: this.name,
      kind: this.kind,
      handle: this,
      fencingToken: this.fencingToken,
    };
  }
}
