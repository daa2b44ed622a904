import type { Grant, LockBackend, LockRequest, ReleaseWatch } from './backend.js';
import { publish } from './diagnostics.js';
import { LockTimeoutError } from './errors/lock-timeout-error.js';
import { delay, jitter, now } from './timing.js';
import type { LockHandle } from './types.js';
import type { ValidAcquireOptions } from './validation.js';

/** What the acquire policy needs from the provider that runs it. */
export interface AcquireHost<G extends Grant> {
  readonly backend: LockBackend<G>;
  /** Throws if the provider is closed. */
  assertOpen(): void;
  /** Registers a wait so close() can abort it; returns the unregister function. */
  trackWait(controller: AbortController, request: LockRequest): () => void;
  /** Turns a grant into a tracked handle (releases it and throws if the provider closed). */
  adopt(request: LockRequest, grant: G): Promise<LockHandle>;
  /** Keeps `work` (a backend call) on the books until it settles, so close() can await it. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Releases a grant nobody will receive (it arrived after the caller gave up). */
  discard(request: LockRequest, grant: G): void;
}

const timedOut: unique symbol = Symbol('lockkit.timed-out');

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
  const controller = new AbortController();
  const { signal } = controller;
  const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = Number.isFinite(deadline)
    ? setTimeout(() => controller.abort(timedOut), timeoutMs)
    : undefined;
  const untrack = host.trackWait(controller, request);
  const event = { backend: backend.backend, name: request.name, kind: request.kind };
  let watch: ReleaseWatch | undefined;
  let waiting = false;
  const markWaiting = (): void => {
    if (waiting) return;
    waiting = true;
    publish('wait', () => event);
  };
  const context = { signal, deadline, waiting: markWaiting };
  try {
    for (;;) {
      const attempt = host.track(backend.tryAcquire(request, context));
      const grant = await raceAbort(attempt, signal, (late) => host.discard(request, late));
      if (grant) {
        if (signal.aborted) {
          host.discard(request, grant);
          throw signal.reason;
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
      if (!watch && backend.watch) {
        watch = await raceAbort(Promise.resolve(backend.watch(request)), signal, (late) =>
          late.close(),
        );
        continue; // subscribe-then-retry
      }
      markWaiting();
      await waitForChange(watch, backend.pollIntervalMs, signal);
    }
  } catch (error) {
    if (error === timedOut || (signal.aborted && signal.reason === timedOut)) {
      publish('acquireFailed', () => ({ ...event, outcome: 'timeout', waitedMs: now() - started }));
      if (throwOnTimeout) throw new LockTimeoutError(request.name, timeoutMs);
      return null;
    }
    publish('acquireFailed', () => ({
      ...event,
      outcome: signal.aborted ? 'aborted' : 'error',
      error,
    }));
    throw error;
  } finally {
    watch?.close();
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
    untrack();
  }
}

const neverAborted: AbortSignal = new AbortController().signal;
const singleAttemptContext = {
  signal: neverAborted,
  deadline: Number.NEGATIVE_INFINITY,
  waiting: (): void => {},
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
 * Resolves like `work`, or rejects with `signal.reason` when `signal` aborts first. A value
 * `work` produces after that goes to `onLate` (so a late grant is released, never leaked).
 */
function raceAbort<T>(
  work: Promise<T>,
  signal: AbortSignal,
  onLate: (value: NonNullable<T>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      settled = true;
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) resolve(value);
        else if (value != null) onLate(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) reject(error);
      },
    );
  });
}

function noop(): void {}
