import { raceAbort, timedOut, WaitController } from './attempt-races.js';
import type { Grant, LockBackend, LockRequest, ReleaseWatch, WaitContext } from './backend.js';
import { publish } from './diagnostics.js';
import { LockTimeoutError } from './errors/lock-timeout-error.js';
import { DeadlineTimer, now } from './timing.js';
import type { LockHandle, LockKind } from './types.js';
import type { ValidAcquireOptions } from './validation.js';
import { waitForChange } from './wait-for-change.js';

/** What the acquire policy needs from the provider that runs it. */
export interface AcquireHost<G extends Grant> {
  readonly backend: LockBackend<G>;
  /** Throws if the provider is closed. */
  assertOpen(): void;
  /** Registers a wait so close() can abort it; returns the unregister function. */
  trackWait(controller: AbortController, request: LockRequest): () => void;
  /**
   * Turns a grant into a tracked handle; if the provider closed, releases the grant and
   * rejects (a promise only then: the common case allocates none).
   */
  adopt(request: LockRequest, grant: G): LockHandle | Promise<never>;
  /** Keeps `work` (a backend call) on the books until it settles, so close() can await it. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * The same bookkeeping by hand, for a caller that reacts to the call's outcome anyway:
   * `enter()` before the call, `leave()` once it settled (saves a reaction per acquire).
   */
  enter(): void;
  leave(): void;
  /** Releases a grant nobody will receive (it arrived after the caller gave up). */
  discard(request: LockRequest, grant: G): void;
}

/** The acquires' deadlines: one timer for all of them, not one armed and cleared per acquire. */
const deadlines = new DeadlineTimer();

/**
 * THE wait/timeout/abort policy, shared by every backend. One attempt; if that fails and the
 * caller will wait: subscribe (backend `watch`), attempt again (so a release between the
 * attempt and the subscription is not missed), then wait for a notification or a jittered
 * safety poll, and repeat until granted, the deadline, the caller's signal, or provider close.
 * Returns null on timeout (or throws LockTimeoutError when `throwOnTimeout`).
 *
 * Shaped for the common case, an uncontended acquire: its first attempt runs with one object
 * of state (the {@link Acquisition}, which is also the attempt's WaitContext) and no async
 * frame; the loop, its try/finally and the abort machinery start only if that attempt fails.
 */
export function acquireWithPolicy<G extends Grant>(
  host: AcquireHost<G>,
  request: LockRequest,
  options: ValidAcquireOptions,
  throwOnTimeout: boolean,
): Promise<LockHandle | null> {
  const { timeoutMs, signal: callerSignal } = options;
  if (callerSignal?.aborted) return Promise.reject(callerSignal.reason);
  try {
    host.assertOpen();
  } catch (error) {
    return Promise.reject(error);
  }
  const { backend } = host;
  const started = now();
  // The common tryAcquire() (timeout 0, no signal): one try with nothing to race, so no
  // controller, timer or wait registration. (acquire() keeps the full policy from its first
  // attempt: backends may register a waiting writer on an attempt that has a deadline.)
  if (timeoutMs === 0 && !callerSignal) {
    const attempt = backend.tryAcquire(request, singleAttemptContext);
    host.enter();
    return attempt.then(
      (grant) => {
        host.leave();
        return grant
          ? granted(host, request, grant, started)
          : timeoutAfterFirstTry(backend, request, timeoutMs, started, throwOnTimeout);
      },
      (error: unknown) => {
        host.leave();
        throw error;
      },
    );
  }
  const deadline =
    timeoutMs === 0
      ? Number.NEGATIVE_INFINITY
      : timeoutMs === Number.POSITIVE_INFINITY
        ? timeoutMs
        : started + timeoutMs;
  const run = new Acquisition(host, request, callerSignal, deadline, started);
  // What makes the acquire abortable (its controller, the caller's signal, the deadline, the
  // provider's close) is armed before the first attempt only when the caller passed a signal;
  // otherwise when the first attempt fails, or when the backend reads the signal. Arming costs
  // more than the rest of an uncontended acquire here. Until then a finite deadline still cuts
  // the first attempt short: it is raced on the shared deadline timer alone.
  if (callerSignal) run.arm();
  return run.start(throwOnTimeout, timeoutMs);
}

/**
 * The state of one acquire that may wait, and the WaitContext its attempts get (call
 * `waiting()` and `failed()` as methods of the context).
 */
class Acquisition<G extends Grant> implements WaitContext {
  readonly #host: AcquireHost<G>;
  readonly #request: LockRequest;
  readonly #callerSignal: AbortSignal | undefined;
  readonly deadline: number;
  readonly #started: number;
  /** Armed: the acquire can be aborted (caller's signal, deadline, provider close). */
  controller: WaitController | undefined;
  #disarm: (() => void) | undefined;
  #watch: ReleaseWatch | undefined;
  #waiting = false;
  /**
   * Why the last finished attempt could not be decided, if its backend said (the cause of a
   * timeout, also when the deadline passes during the next attempt), and the one in flight.
   */
  #failure: unknown;
  #attemptFailure: unknown;

  constructor(
    host: AcquireHost<G>,
    request: LockRequest,
    callerSignal: AbortSignal | undefined,
    deadline: number,
    started: number,
  ) {
    this.#host = host;
    this.#request = request;
    this.#callerSignal = callerSignal;
    this.deadline = deadline;
    this.#started = started;
  }

  get signal(): AbortSignal {
    return this.arm().signal;
  }

  waiting(): void {
    if (this.#waiting) return;
    this.#waiting = true;
    publish('wait', () => this.#event());
  }

  failed(cause: unknown): void {
    this.#attemptFailure = cause;
  }

  arm(): WaitController {
    if (this.controller) return this.controller;
    const armed = new WaitController();
    this.controller = armed;
    const callerSignal = this.#callerSignal;
    const onCallerAbort = (): void => armed.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const expiry = Number.isFinite(this.deadline)
      ? deadlines.add(this.deadline, () => armed.abort(timedOut))
      : undefined;
    const untrack = this.#host.trackWait(armed, this.#request);
    this.#disarm = () => {
      if (expiry) deadlines.delete(expiry);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      untrack();
    };
    return armed;
  }

  /**
   * The first attempt, then whatever follows it. Unarmed, only a finite deadline cuts the
   * attempt short (nothing else can abort it yet, except through the signal if the backend
   * read it, which armed the controller): the attempt and the deadline settle one promise
   * between them, and a grant that arrives after the deadline is released.
   */
  start(throwOnTimeout: boolean, timeoutMs: number): Promise<LockHandle | null> {
    const host = this.#host;
    const attempt = this.#call();
    // In flight until the attempt settles: counted by the reactions below where they react to
    // the attempt itself, by one of its own where a race may settle first.
    host.enter();
    const next = (grant: G | null): LockHandle | Promise<LockHandle | null> =>
      grant && !this.controller
        ? granted(host, this.#request, grant, this.#started)
        : this.wait(grant, throwOnTimeout, timeoutMs);
    if (this.controller) {
      const settled = (): void => host.leave();
      attempt.then(settled, settled);
      return this.#raced(attempt).then(next, (error: unknown) =>
        this.fail(error, throwOnTimeout, timeoutMs),
      );
    }
    if (!Number.isFinite(this.deadline)) {
      return attempt.then(
        (grant) => {
          host.leave();
          return next(grant);
        },
        (error: unknown) => {
          host.leave();
          return this.fail(error, throwOnTimeout, timeoutMs);
        },
      );
    }
    return new Promise((resolve, reject) => {
      let late = false;
      const fail = (error: unknown): void => {
        try {
          resolve(this.fail(error, throwOnTimeout, timeoutMs));
        } catch (thrown) {
          reject(thrown);
        }
      };
      const expiry = deadlines.add(this.deadline, () => {
        late = true;
        fail(timedOut);
      });
      attempt.then(
        (grant) => {
          host.leave();
          deadlines.delete(expiry);
          if (!late) resolve(next(grant));
          else if (grant) host.discard(this.#request, grant);
        },
        (error: unknown) => {
          host.leave();
          deadlines.delete(expiry);
          if (!late) fail(this.controller?.aborted ? this.controller.reason : error);
        },
      );
    });
  }

  /** One attempt, raced against the controller if armed (a late grant is released). */
  attempt(): Promise<G | null> {
    return this.#raced(this.#tryOnce());
  }

  #tryOnce(): Promise<G | null> {
    return this.#host.track(this.#call());
  }

  #call(): Promise<G | null> {
    try {
      return this.#host.backend.tryAcquire(this.#request, this);
    } catch (error) {
      return Promise.reject(error); // a backend that throws instead of rejecting
    }
  }

  #raced(attempt: Promise<G | null>): Promise<G | null> {
    if (!this.controller) return attempt;
    const host = this.#host;
    const request = this.#request;
    return raceAbort(attempt, this.controller, (late) => host.discard(request, late));
  }

  /** After the first attempt: adopts `first` if granted, else waits and retries. */
  async wait(
    first: G | null,
    throwOnTimeout: boolean,
    timeoutMs: number,
  ): Promise<LockHandle | null> {
    const host = this.#host;
    const { backend } = host;
    const request = this.#request;
    let grant = first;
    try {
      for (;;) {
        this.#failure = this.#attemptFailure;
        this.#attemptFailure = undefined;
        if (grant) {
          if (this.controller?.aborted) {
            host.discard(request, grant);
            throw this.controller.reason;
          }
          break;
        }
        if (now() >= this.deadline) throw timedOut;
        const armed = this.arm();
        if (!this.#watch && backend.watch) {
          this.#watch = await raceAbort(Promise.resolve(backend.watch(request)), armed, (late) =>
            late.close(),
          );
        } else {
          this.waiting();
          await waitForChange(this.#watch, backend.pollIntervalMs, armed.signal);
        }
        grant = await this.attempt(); // right after a new watch: subscribe-then-retry
      }
    } catch (error) {
      return this.#failed(error, throwOnTimeout, timeoutMs);
    } finally {
      this.#watch?.close();
      this.#disarm?.();
    }
    return granted(host, request, grant, this.#started);
  }

  /** The first attempt rejected (its deadline passed, an abort, or a backend error). */
  fail(error: unknown, throwOnTimeout: boolean, timeoutMs: number): null {
    try {
      return this.#failed(error, throwOnTimeout, timeoutMs);
    } finally {
      this.#disarm?.();
    }
  }

  #failed(error: unknown, throwOnTimeout: boolean, timeoutMs: number): null {
    const controller = this.controller;
    if (error === timedOut || (controller?.aborted && controller.reason === timedOut)) {
      publish('acquireFailed', () => ({
        ...this.#event(),
        outcome: 'timeout',
        waitedMs: now() - this.#started,
      }));
      if (throwOnTimeout) {
        throw new LockTimeoutError(this.#request.name, timeoutMs, { cause: this.#failure });
      }
      return null;
    }
    publish('acquireFailed', () => ({
      ...this.#event(),
      outcome: controller?.aborted ? 'aborted' : 'error',
      error,
    }));
    throw error;
  }

  #event(): { backend: string; name: string; kind: LockKind } {
    const { name, kind } = this.#request;
    return { backend: this.#host.backend.backend, name, kind };
  }
}

const neverAborted: AbortSignal = new AbortController().signal;
const singleAttemptContext: WaitContext = {
  signal: neverAborted,
  deadline: Number.NEGATIVE_INFINITY,
  waiting: (): void => {},
  failed: (): void => {}, // a single attempt has no timeout to explain: the backend throws
};

/**
 * Adopts a grant and publishes it. Adopting rejects only when the provider closed meanwhile
 * (the grant is then released); that is published as an aborted acquire.
 */
function granted<G extends Grant>(
  host: AcquireHost<G>,
  request: LockRequest,
  grant: G,
  started: number,
): LockHandle | Promise<never> {
  const handle = host.adopt(request, grant);
  if (handle instanceof Promise) {
    return handle.catch((error: unknown) => {
      publish('acquireFailed', () => ({
        backend: host.backend.backend,
        name: request.name,
        kind: request.kind,
        outcome: 'aborted',
        error,
      }));
      throw error;
    });
  }
  publish('acquire', () => ({
    backend: host.backend.backend,
    name: request.name,
    kind: request.kind,
    fencingToken: grant.fencingToken,
    waitedMs: now() - started,
  }));
  return handle;
}

/** The outcome of a `tryAcquire()` whose single try failed. */
function timeoutAfterFirstTry(
  backend: LockBackend<Grant>,
  request: LockRequest,
  timeoutMs: number,
  started: number,
  throwOnTimeout: boolean,
): null {
  publish('acquireFailed', () => ({
    backend: backend.backend,
    name: request.name,
    kind: request.kind,
    outcome: 'timeout',
    waitedMs: now() - started,
  }));
  if (throwOnTimeout) throw new LockTimeoutError(request.name, timeoutMs);
  return null;
}
