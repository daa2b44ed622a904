import { AcquireStop, type Stoppable, timedOut } from './attempt-races.js';
import type { Grant, LockBackend, LockRequest, ReleaseWatch, WaitContext } from './backend.js';
import { type LockEventDraft, publish } from './diagnostics.js';
import { BackendUnavailableError } from './errors/backend-unavailable-error.js';
import { LockTimeoutError } from './errors/lock-timeout-error.js';
import { DeadlineTimer, now } from './timing.js';
import type { LockHandle, LockKind } from './types.js';
import type { ValidAcquireOptions } from './validation.js';
import { waitForChange } from './wait-for-change.js';

/** The acquires' deadlines: one timer for all of them (a setTimeout armed and cleared per call
 * cost about 30 µs of a timed acquire; A/B in the header). */
const deadlines = new DeadlineTimer();

/**
 * How long (ms) a call that gave up waits for its attempt in flight to end on the server and
 * for a late grant's release before it rejects anyway (a server that does not answer): the
 * bound docs/contract.md gives an abort. The cleanup goes on in the background after that.
 */
const gaveUpCleanupMs = 250;

/** What the acquire policy needs from the provider that runs it. */
export interface AcquireHost<G extends Grant> {
  readonly backend: LockBackend<G>;
  /** Throws if the provider is closed. */
  assertOpen(): void;
  /** Registers an acquire so close() can stop it; returns the unregister function. */
  trackWait(acquire: Stoppable, request: LockRequest): () => void;
  /**
   * Turns a grant into a tracked handle; if the provider closed, releases the grant and
   * rejects (a promise only then).
   */
  adopt(request: LockRequest, grant: G): LockHandle | Promise<never>;
  /** Keeps `work` (a backend call) on the books until it settles, so close() can await it. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * Releases a grant nobody will receive (it arrived after the caller gave up); settles (never
   * rejects) once the release has.
   */
  discard(request: LockRequest, grant: G): Promise<void>;
}

/**
 * THE wait/timeout/abort policy, shared by every backend. Read it top to bottom:
 *
 * 1. Attempt. A grant is adopted as a handle; a grant that arrives after the caller gave up
 *    (deadline, its signal, provider close) is released. A call that gives up while an
 *    attempt is in flight rejects only once that attempt has ended (the backend ends a
 *    server-side wait on `wait.signal`) and its late grant, if any, is released — or, if the
 *    server does not answer, after {@link gaveUpCleanupMs}: when the call rejects, the server
 *    holds and queues nothing for it (docs/contract.md, Timeouts).
 * 2. A single try (timeout 0) ends here: `null` / `LockTimeoutError`.
 * 3. Otherwise subscribe to release notifications (`backend.watch`) and attempt again at once,
 *    so a release between the attempt and the subscription is not missed; after that, wait
 *    for a notification or the jittered safety poll, and attempt again.
 * 4. The outage policy (docs/contract.md): an attempt that throws a retryable
 *    `BackendUnavailableError` is retried like a refused one (polling, as the server cannot
 *    notify) until the deadline, which then rejects with that error; a single try rejects
 *    with it at once, and so does every call for one marked `retryable: false`.
 *
 * Performance budget (`AB_ROUNDS=100 AB_BACKENDS=redis,postgres bash scripts/ab.sh e91ed92`,
 * the hand-tuned policy before the rewrite as A; uncontended `acquire({ timeout: 5000 })` +
 * release, median (IQR) of the per-round ratios, A′ = A again as the noise; 2026-11-25, 2 CPUs,
 * load average 1). Without the inspection record the baseline lacked (`AB_B_OPTIONS=
 * '{"recordHolds":false}'`): redis 79 (45–137) % [noise 104 (69–196) %], postgres 86 (73–102) %
 * [94 (83–108) %]. With it (the default): redis 76 (43–107) %, postgres 57 (46–67) % — the
 * record's price, switchable. Handoff within 0.1 ms of A. A finer interleaved probe still puts
 * Redis at about +10 µs per cycle (ioredis's public `Command` flattening its arguments, core
 * bookkeeping): no round trip is left to remove (two per cycle).
 * The one fast path: an acquire stops through a plain {@link AcquireStop}, not an
 * AbortController (whose event dispatch cost PostgreSQL 25–40 µs of a ~150 µs timed cycle);
 * deadlines share one timer.
 */
export async function acquireWithPolicy<G extends Grant>(
  host: AcquireHost<G>,
  request: LockRequest,
  options: ValidAcquireOptions,
  throwOnTimeout: boolean,
): Promise<LockHandle | null> {
  const { timeoutMs, signal: callerSignal } = options;
  callerSignal?.throwIfAborted();
  host.assertOpen();
  const { backend } = host;
  const started = now();
  const deadline = timeoutMs === 0 ? Number.NEGATIVE_INFINITY : started + timeoutMs;
  /** Ends the acquire at the deadline, on the caller's abort and on close(). */
  const stop = new AcquireStop();
  const onCallerAbort = (): void => stop.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const expiry = Number.isFinite(deadline)
    ? deadlines.add(deadline, () => stop.abort(timedOut))
    : undefined;
  const untrack = host.trackWait(stop, request);
  /** When the wait began (`lockkit:wait`); undefined until it does. */
  let waitStart: number | undefined;
  const wait: WaitContext = {
    get signal() {
      return stop.signal;
    },
    deadline,
    waiting: () => {
      if (waitStart !== undefined) return;
      waitStart = now();
      publish('wait', () => event(backend, request));
    },
  };
  /** The lock and timing fields of an `acquire` / `acquire-failed` event, to add to. */
  const measured = (): LockEventDraft => {
    const message: LockEventDraft = { ...event(backend, request), waitedMs: now() - started };
    if (waitStart !== undefined) message.waitStartMs = waitStart - started;
    return message;
  };
  const discard = (late: G): Promise<void> => host.discard(request, late);
  let watch: ReleaseWatch | undefined;
  /** The BackendUnavailableError of the last finished attempt, while the server is out of reach. */
  let unreachable: unknown;
  /** How an acquire that got no lock ends (published on `lockkit:acquire-failed`). */
  const failed = async (error: unknown): Promise<null> => {
    // Aborted: the caller's signal or close() stopped the wait with this error (read before
    // the stop below, which would make every error look like one).
    const aborted = stop.stopped && error === stop.reason;
    // Every acquire that ends without a grant aborts `wait.signal` (a no-op if it already
    // did): the one event a backend needs to clean up waiting state.
    stop.abort(error);
    // An attempt cut short by the stop: wait until it has ended on the server and its late
    // grant is released, so nothing of this call is queued or held when it rejects (bounded:
    // a server that does not answer must not hold up an abort).
    await stop.aftermath(gaveUpCleanupMs);
    const outcome = aborted ? 'aborted' : 'error';
    if (error !== timedOut) {
      publish('acquireFailed', () => Object.assign(measured(), { outcome, error }));
      throw error;
    }
    const failure = unreachable;
    if (failure !== undefined) {
      // The server was out of reach at the last attempt: say so, not "someone holds it".
      publish('acquireFailed', () =>
        Object.assign(measured(), { outcome: 'error', error: failure }),
      );
      throw failure;
    }
    publish('acquireFailed', () => Object.assign(measured(), { outcome: 'timeout' as const }));
    if (throwOnTimeout) throw new LockTimeoutError(request.name, timeoutMs);
    return null;
  };
  let grant: G | null = null;
  try {
    for (;;) {
      stop.throwIfStopped();
      try {
        grant = await stop.race(host.track(attempt(backend, request, wait)), discard);
        unreachable = undefined;
      } catch (error) {
        const single = deadline === Number.NEGATIVE_INFINITY;
        if (single || !BackendUnavailableError.isRetryable(error) || stop.stopped) throw error;
        unreachable = error;
      }
      if (grant) break;
      if (deadline === Number.NEGATIVE_INFINITY || now() >= deadline) throw timedOut;
      if (!watch && backend.watch && unreachable === undefined) {
        try {
          watch = await stop.race(watchOf(backend, request), (late) => late.close());
          continue; // subscribe-then-retry
        } catch (error) {
          if (!BackendUnavailableError.isRetryable(error) || stop.stopped) throw error;
        }
      }
      wait.waiting(); // no-op if the backend already said so
      const notifier = unreachable === undefined ? watch : undefined; // an outage: poll
      await waitForChange(notifier, backend.pollIntervalMs, stop.signal);
    }
  } catch (error) {
    return await failed(error);
  } finally {
    if (expiry) deadlines.delete(expiry);
    callerSignal?.removeEventListener('abort', onCallerAbort);
    untrack();
    watch?.close();
  }
  return adopted(host, request, grant, measured);
}

/** One backend attempt, with a synchronous throw turned into a rejection. */
function attempt<G extends Grant>(
  backend: LockBackend<G>,
  request: LockRequest,
  wait: WaitContext,
): Promise<G | null> {
  try {
    return backend.tryAcquire(request, wait);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The backend's watch, with a synchronous throw turned into a rejection. */
function watchOf<G extends Grant>(
  backend: LockBackend<G>,
  request: LockRequest,
): Promise<ReleaseWatch> {
  try {
    return Promise.resolve((backend.watch as NonNullable<typeof backend.watch>)(request));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Adopts a grant and publishes it. Adopting rejects only when the provider closed meanwhile
 * (the grant is then released); that is published as an aborted acquire.
 */
async function adopted<G extends Grant>(
  host: AcquireHost<G>,
  request: LockRequest,
  grant: G,
  measured: () => LockEventDraft,
): Promise<LockHandle> {
  try {
    const handle = await host.adopt(request, grant);
    publish('acquire', () =>
      Object.assign(measured(), { handle, fencingToken: grant.fencingToken }),
    );
    return handle;
  } catch (error) {
    publish('acquireFailed', () =>
      Object.assign(measured(), { outcome: 'aborted' as const, error }),
    );
    throw error;
  }
}

function event(
  backend: LockBackend<Grant>,
  request: LockRequest,
): { backend: string; name: string; kind: LockKind } {
  return { backend: backend.backend, name: request.name, kind: request.kind };
}
