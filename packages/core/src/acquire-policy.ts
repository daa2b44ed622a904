import type { Grant, LockBackend, LockRequest, ReleaseWatch, WaitContext } from './backend.js';
import { publish } from './diagnostics.js';
import { LockTimeoutError } from './errors/lock-timeout-error.js';
import { DeadlineTimer, delay, jitter, now } from './timing.js';
import type { LockHandle } from './types.js';
import type { ValidAcquireOptions } from './validation.js';

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
  /** Releases a grant nobody will receive (it arrived after the caller gave up). */
  discard(request: LockRequest, grant: G): void;
}

const timedOut: unique symbol = Symbol('lockkit.timed-out');

/** The acquires' deadlines: one timer for all of them, not one armed and cleared per acquire. */
const deadlines = new DeadlineTimer();

/**
 * THE wait/timeout/abort policy, shared by every backend. One attempt; if that fails and the
 * caller will wait: subscribe (backend `watch`), attempt again (so a release between the
 * attempt and the subscription is not missed), then wait for a notification or a jittered
 * safety poll, and repeat until granted, the deadline, the caller's signal, or provider close.
 * Returns null on timeout (or throws LockTimeoutError when `throwOnTimeout`).
 */
export async function acquireWithPolicy<G extends Grant>(
  host: AcquireHost<G>,
  request: LockRequest,
  options: ValidAcquireOptions,
  throwOnTimeout: boolean,
): Promise<LockHandle | null> {
  const { timeoutMs, signal: callerSignal } = options;
  if (callerSignal?.aborted) throw callerSignal.reason;
  host.assertOpen();
  const { backend } = host;
  const started = now();
  // The common tryAcquire() (timeout 0, no signal): one try with nothing to race, so no
  // controller, timer or wait registration. (acquire() keeps the full policy from its first
  // attempt: backends may register a waiting writer on an attempt that has a deadline.)
  if (timeoutMs === 0 && !callerSignal) {
    const grant = await host.track(backend.tryAcquire(request, singleAttemptContext));
    if (grant) return granted(host, request, grant, started);
    return timeoutAfterFirstTry(backend, request, timeoutMs, started, throwOnTimeout);
  }
  const deadline =
    timeoutMs === 0
      ? Number.NEGATIVE_INFINITY
      : timeoutMs === Number.POSITIVE_INFINITY
        ? timeoutMs
        : started + timeoutMs;
  const event = { backend: backend.backend, name: request.name, kind: request.kind };
  // What makes the acquire abortable (its controller, the caller's signal, the deadline, the
  // provider's close) is armed before the first attempt only when the caller passed a signal;
  // otherwise when the first attempt fails, or when the backend reads the signal. Arming costs
  // more than the rest of an uncontended acquire here. Until then a finite deadline still cuts
  // the first attempt short: it is raced on the shared deadline timer alone.
  let controller: WaitController | undefined;
  let disarm: (() => void) | undefined;
  const arm = (): WaitController => {
    if (controller) return controller;
    const armed = new WaitController();
    controller = armed;
    const onCallerAbort = (): void => armed.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const expiry = Number.isFinite(deadline)
      ? deadlines.add(deadline, () => armed.abort(timedOut))
      : undefined;
    const untrack = host.trackWait(armed, request);
    disarm = () => {
      if (expiry) deadlines.delete(expiry);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      untrack();
    };
    return armed;
  };
  if (callerSignal) arm();
  let watch: ReleaseWatch | undefined;
  let waiting = false;
  // Why the last finished attempt could not be decided, if its backend said (the cause of a
  // timeout, also when the deadline passes during the next attempt), and the one in flight.
  let failure: unknown;
  let attemptFailure: unknown;
  const context: WaitContext = {
    get signal() {
      return arm().signal;
    },
    deadline,
    waiting: () => {
      if (waiting) return;
      waiting = true;
      publish('wait', () => event);
    },
    failed: (cause) => {
      attemptFailure = cause;
    },
  };
  try {
    for (;;) {
      const attempt = host.track(backend.tryAcquire(request, context));
      // An unarmed attempt is cut short only by a finite deadline: nothing else can abort it
      // yet, except through the signal if the backend read it (which armed the controller).
      const grant = controller
        ? await raceAbort(attempt, controller, (late) => host.discard(request, late))
        : Number.isFinite(deadline)
          ? await raceDeadline(
              attempt,
              deadline,
              () => controller,
              (late) => host.discard(request, late),
            )
          : await attempt;
      failure = attemptFailure;
      attemptFailure = undefined;
      if (grant) {
        if (controller?.aborted) {
          host.discard(request, grant);
          throw controller.reason;
        }
        const handle = await host.adopt(request, grant);
        publish('acquire', () => ({
          ...event,
          fencingToken: grant.fencingToken,
          waitedMs: now() - started,
        }));
        return handle;
      }
      if (now() >= deadline) throw timedOut;
      const armed = arm();
      if (!watch && backend.watch) {
        watch = await raceAbort(Promise.resolve(backend.watch(request)), armed, (late) =>
          late.close(),
        );
        continue; // subscribe-then-retry
      }
      context.waiting();
      await waitForChange(watch, backend.pollIntervalMs, armed.signal);
    }
  } catch (error) {
    if (error === timedOut || (controller?.aborted && controller.reason === timedOut)) {
      publish('acquireFailed', () => ({ ...event, outcome: 'timeout', waitedMs: now() - started }));
      if (throwOnTimeout) {
        throw new LockTimeoutError(request.name, timeoutMs, { cause: failure });
      }
      return null;
    }
    publish('acquireFailed', () => ({
      ...event,
      outcome: controller?.aborted ? 'aborted' : 'error',
      error,
    }));
    throw error;
  } finally {
    watch?.close();
    disarm?.();
  }
}

/**
 * The controller of one acquire. Node builds an AbortController's signal on first use, so
 * this one keeps its own aborted state and a callback for {@link raceAbort}, and the signal
 * is only built when a backend or a wait reads it (or when it aborts).
 */
class WaitController extends AbortController {
  aborted = false;
  reason: unknown;
  /** Called once on abort (the attempt or watch being raced), if set. */
  onAbort: (() => void) | undefined;

  override abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    super.abort(reason);
    this.reason = this.signal.reason; // as the signal has it (a default AbortError for none)
    this.onAbort?.();
  }
}

const neverAborted: AbortSignal = new AbortController().signal;
const singleAttemptContext: WaitContext = {
  signal: neverAborted,
  deadline: Number.NEGATIVE_INFINITY,
  waiting: (): void => {},
  failed: (): void => {}, // a single attempt has no timeout to explain: the backend throws
};

/** Adopts a grant from the single try and publishes it. */
async function granted<G extends Grant>(
  host: AcquireHost<G>,
  request: LockRequest,
  grant: G,
  started: number,
): Promise<LockHandle> {
  const handle = await host.adopt(request, grant);
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

/** Waits for a release notification or the jittered safety poll, whichever comes first. */
async function waitForChange(
  watch: ReleaseWatch | undefined,
  pollMs: number,
  signal: AbortSignal,
): Promise<void> {
  const local = new AbortController();
  const onAbort = (): void => local.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const poll = delay(jitter(pollMs), local.signal, true); // the caller awaits this wait
  const notified = watch?.next(local.signal);
  poll.catch(noop);
  notified?.catch(noop);
  await Promise.race(notified ? [notified, poll] : [poll]).finally(() => {
    signal.removeEventListener('abort', onAbort);
    local.abort(null); // settles the losing wait; its rejection is ignored above
  });
}

/**
 * Resolves like `work`, or rejects with the controller's reason when it aborts first. A value
 * `work` produces after that goes to `onLate` (so a late grant is released, never leaked).
 */
function raceAbort<T>(
  work: Promise<T>,
  controller: WaitController,
  onLate: (value: NonNullable<T>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    if (controller.aborted) {
      settled = true;
      reject(controller.reason);
    } else {
      controller.onAbort = () => {
        settled = true;
        reject(controller.reason);
      };
    }
    work.then(
      (value) => {
        controller.onAbort = undefined;
        if (!settled) resolve(value);
        else if (value != null) onLate(value);
      },
      (error: unknown) => {
        controller.onAbort = undefined;
        if (!settled) reject(error);
      },
    );
  });
}

/**
 * Like {@link raceAbort} for an attempt made before the acquire armed its controller: rejects
 * with `timedOut` at `deadline` (one entry on the shared deadline timer, no controller). A
 * backend that read the signal during the attempt armed the controller; if that aborted (the
 * provider closed), the attempt's rejection is reported as the abort.
 */
function raceDeadline<T>(
  work: Promise<T>,
  deadline: number,
  armed: () => WaitController | undefined,
  onLate: (value: NonNullable<T>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const expiry = deadlines.add(deadline, () => {
      settled = true;
      reject(timedOut);
    });
    work.then(
      (value) => {
        deadlines.delete(expiry);
        if (!settled) resolve(value);
        else if (value != null) onLate(value);
      },
      (error: unknown) => {
        deadlines.delete(expiry);
        if (!settled) reject(armed()?.aborted ? armed()?.reason : error);
      },
    );
  });
}

function noop(): void {}
