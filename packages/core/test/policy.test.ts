/**
 * Core's shared policy (lease extension and expiry, notified waiting, late grants,
 * diagnostics) driven through a scripted backend: a tiny in-process LockBackend whose
 * answers the test controls. It stands in for no server; the servers are tested by their
 * backends against the real thing.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Grant,
  type LockBackend,
  LockProvider,
  type LockRequest,
  now,
  type ReleaseWatch,
  type WaitContext,
  Wakeup,
} from '../src/for-backends.js';
import {
  BackendUnavailableError,
  type IDistributedLock,
  LockLostError,
  LockTimeoutError,
} from '../src/index.js';
import { DeadlineTimer } from '../src/timing.js';

interface ScriptedGrant extends Grant {
  readonly id: number;
}

class ScriptedBackend implements LockBackend<ScriptedGrant> {
  readonly backend = 'scripted';
  readonly capabilities = {
    crossProcess: false,
    handOver: false,
    leases: true,
    minLeaseMs: 100,
    weightedPermits: false,
    fifo: false,
    lostDetectionMs: 0,
    abandonedReleaseMs: 0,
    unavailableMs: 0,
  };
  pollIntervalMs = 60_000;
  leaseMs = 300;
  autoExtend = true;
  extendAnswer: 'ok' | 'not-owner' | 'throw' | 'hang' = 'ok';
  extendCalls = 0;
  /** The lease length each extend() was asked for. */
  extendLengths: number[] = [];
  attempts = 0;
  free = true;
  releases: number[] = [];
  watchers = new Set<Wakeup>();
  grantDelayMs = 0;
  /** Set: every attempt throws it (the server is out of reach). */
  unreachable: Error | undefined;
  /** Set: release() rejects with it. */
  releaseFailure: Error | undefined;
  /** Set: watch() rejects with it. */
  watchFailure: Error | undefined;
  #nextId = 1;

  /** Set: tryAcquire throws synchronously (a backend that throws instead of rejecting). */
  throwSync: Error | undefined;

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<ScriptedGrant | null> {
    if (this.throwSync) throw this.throwSync;
    return this.#tryAcquire(request, wait);
  }

  async #tryAcquire(request: LockRequest, _wait: WaitContext): Promise<ScriptedGrant | null> {
    this.attempts += 1;
    if (this.unreachable) throw this.unreachable;
    if (this.grantDelayMs) await new Promise((resolve) => setTimeout(resolve, this.grantDelayMs));
    if (!this.free) return null;
    this.free = false;
    const durationMs = request.leaseMs ?? this.leaseMs;
    const lease = {
      durationMs,
      validUntil: now() + durationMs,
      autoExtend: request.autoExtend ?? this.autoExtend,
    };
    return { id: this.#nextId++, fencingToken: BigInt(this.#nextId), lease };
  }

  watch(): Wakeup {
    if (this.watchFailure) throw this.watchFailure; // core takes a throw like a rejection
    const wakeup = new Wakeup(() => this.watchers.delete(wakeup));
    this.watchers.add(wakeup);
    return wakeup;
  }

  async release(_request: LockRequest, grant: ScriptedGrant): Promise<boolean> {
    if (this.releaseFailure) throw this.releaseFailure;
    this.releases.push(grant.id);
    this.free = true;
    return true;
  }

  extend(
    _request: LockRequest,
    _grant: ScriptedGrant,
    durationMs: number,
  ): Promise<number | false> {
    this.extendCalls += 1;
    this.extendLengths.push(durationMs);
    if (this.extendAnswer === 'throw') return Promise.reject(new Error('connection reset'));
    if (this.extendAnswer === 'hang') return new Promise(() => {}); // the server never answers
    if (this.extendAnswer === 'not-owner') return Promise.resolve(false);
    return Promise.resolve(now() + durationMs); // answers at once, like a synchronous backend
  }

  async close(): Promise<void> {}

  /** Someone else released: tell the watchers. */
  releasedElsewhere(): void {
    this.free = true;
    for (const watcher of this.watchers) watcher.notify();
  }
}

const providers: LockProvider<ScriptedGrant>[] = [];
function setup(configure: (backend: ScriptedBackend) => void = () => {}) {
  const backend = new ScriptedBackend();
  configure(backend);
  const provider = new LockProvider(backend);
  providers.push(provider);
  return { backend, provider, lock: provider.createLock('scripted') };
}
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function lostWithin(signal: AbortSignal, ms: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not lost within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

describe('leases', () => {
  it('a lease outlives 3× its duration while it is extended every duration/3', async () => {
    const { backend, lock } = setup();
    const handle = await lock.acquire();
    await new Promise((resolve) => setTimeout(resolve, 3 * backend.leaseMs));
    expect(handle.signal.aborted).toBe(false);
    expect(backend.extendCalls).toBeGreaterThanOrEqual(6);
    expect(await handle.release()).toBe(true);
    const calls = backend.extendCalls;
    await new Promise((resolve) => setTimeout(resolve, backend.leaseMs));
    expect(backend.extendCalls).toBe(calls); // release stopped the extension timer
  });

  it('"not owner" from an extension fires the lost signal at once', async () => {
    const { backend, lock } = setup((b) => {
      b.extendAnswer = 'not-owner';
    });
    const handle = await lock.acquire();
    const reason = await lostWithin(handle.signal, backend.leaseMs);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(backend.extendCalls).toBe(1);
    expect(await handle.release()).toBe(false);
  });

  it('failing extensions fire the lost signal when the lease runs out, with the cause', async () => {
    const { backend, lock } = setup((b) => {
      b.extendAnswer = 'throw';
    });
    const started = now();
    const handle = await lock.acquire();
    const reason = (await lostWithin(handle.signal, 2 * backend.leaseMs)) as LockLostError;
    expect(now() - started).toBeGreaterThanOrEqual(backend.leaseMs - 5);
    // Whichever comes first under load: the expiry timer, or a retry that finds the lease over.
    expect(reason.message).toMatch(/extensions were failing|lease ran out before it was extended/);
    expect((reason.cause as Error).message).toBe('connection reset');
    expect(backend.extendCalls).toBeGreaterThan(1); // it kept trying
  });

  it('an extension that never answers: the lost signal fires when the lease runs out', async () => {
    const { backend, lock } = setup((b) => {
      b.extendAnswer = 'hang';
    });
    const started = now();
    const handle = await lock.acquire();
    const reason = (await lostWithin(handle.signal, 2 * backend.leaseMs)) as LockLostError;
    expect(now() - started).toBeGreaterThanOrEqual(backend.leaseMs - 5);
    expect(reason.message).toMatch(/ran out before it was extended/);
    expect(backend.extendCalls).toBe(1); // the one extension still in flight
  });

  it('autoExtend false: a fixed lease, lost when it runs out, never extended', async () => {
    const { backend, lock } = setup((b) => {
      b.autoExtend = false;
    });
    const handle = await lock.acquire();
    await lostWithin(handle.signal, 2 * backend.leaseMs);
    expect(backend.extendCalls).toBe(0);
  });
});

describe('waiting', () => {
  it('subscribes, retries, then wakes on a notification (not the 60 s safety poll)', async () => {
    const { backend, lock } = setup();
    const holder = await lock.acquire();
    backend.free = false;
    const waiting = lock.acquire();
    await new Promise((resolve) => setImmediate(resolve));
    expect(backend.watchers.size).toBe(1);
    expect(backend.attempts).toBe(3); // holder's, the waiter's first, and its retry after subscribing
    const notifiedAt = now();
    backend.releasedElsewhere();
    const handle = await waiting;
    expect(now() - notifiedAt).toBeLessThan(50);
    expect(backend.watchers.size).toBe(0); // the watch was closed
    await handle.release();
    await holder.release();
  });

  it('a notification after the safety poll fired still wakes the wait that follows it', async () => {
    const { backend, lock } = setup((b) => {
      b.pollIntervalMs = 250;
    });
    const signals: AbortSignal[] = []; // what each wait passed to the watch's next()
    const watch = backend.watch.bind(backend);
    backend.watch = (): Wakeup => {
      const wakeup = watch();
      const recorded: ReleaseWatch = {
        next: (signal) => {
          signals.push(signal);
          return wakeup.next(signal);
        },
        close: () => wakeup.close(),
      };
      return recorded as Wakeup;
    };
    const holder = await lock.acquire();
    backend.free = false;
    const waiting = lock.acquire();
    // The waiter's first wait ends by its safety poll (about 250 ms): one more refused attempt.
    while (backend.attempts < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(signals[0]?.aborted).toBe(true); // the poll cancelled that wait's next()
    const notifiedAt = now();
    backend.releasedElsewhere();
    const handle = await waiting;
    // Woken by the notification, not by the next poll (at least 200 ms away): the wait the poll
    // ended did not keep a waiter behind that swallowed it.
    expect(now() - notifiedAt).toBeLessThan(100);
    expect(backend.attempts).toBe(5);
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(false); // a notified wait aborts nothing
    await handle.release();
    await holder.release();
  });

  it('a grant that arrives after the caller gave up is released, not leaked', async () => {
    const { backend, lock } = setup((b) => {
      b.grantDelayMs = 100;
    });
    expect(await lock.tryAcquire({ timeout: 20 })).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(backend.releases).toHaveLength(1);
    expect(backend.free).toBe(true);
  });
});

describe('timeouts', () => {
  it('out of reach: a timed call retries until its deadline, then rejects with the failure (never null)', async () => {
    const unreachable = new BackendUnavailableError('no quorum');
    const { backend, lock } = setup((b) => {
      b.unreachable = unreachable;
      b.pollIntervalMs = 10;
    });
    for (const call of [
      () => lock.acquire({ timeout: 100 }),
      () => lock.tryAcquire({ timeout: 100 }),
    ]) {
      const attempts = backend.attempts;
      const started = now();
      expect(await call().catch((e: unknown) => e)).toBe(unreachable);
      expect(now() - started).toBeGreaterThanOrEqual(95);
      expect(backend.attempts - attempts).toBeGreaterThan(2); // it kept trying until the deadline
    }
  });

  it('out of reach: a single try rejects at once; an untimed acquire retries until aborted', async () => {
    const unreachable = new BackendUnavailableError('refused');
    const { backend, lock } = setup((b) => {
      b.unreachable = unreachable;
      b.pollIntervalMs = 10;
    });
    await expect(lock.tryAcquire()).rejects.toBe(unreachable);
    await expect(lock.acquire({ timeout: 0 })).rejects.toBe(unreachable);
    expect(backend.attempts).toBe(2);
    const controller = new AbortController();
    const waiting = lock.acquire({ signal: controller.signal }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(backend.attempts).toBeGreaterThan(4), { timeout: 5000 });
    controller.abort('stop');
    expect(await waiting).toBe('stop');
  });

  it('out of reach: a failing watch falls back to polling; the call ends with the last attempt', async () => {
    const { backend, lock } = setup((b) => {
      b.free = false;
      b.pollIntervalMs = 10;
      b.watchFailure = new BackendUnavailableError('subscribe failed');
    });
    // The attempts answer "held" (the server is reachable): a timeout, not the watch's failure.
    expect(await lock.tryAcquire({ timeout: 60 })).toBeNull();
    expect(backend.attempts).toBeGreaterThan(1);
    const other = new Error('a bug, not an outage');
    backend.watchFailure = other;
    await expect(lock.acquire({ timeout: 60 })).rejects.toBe(other);
  });

  it('an attempt that reaches the server again ends the outage: the deadline is a plain timeout', async () => {
    const { backend, lock } = setup((b) => {
      b.unreachable = new BackendUnavailableError('blip');
      b.free = false;
      b.pollIntervalMs = 10;
    });
    setTimeout(() => {
      backend.unreachable = undefined;
    }, 30);
    const error = await lock.acquire({ timeout: 120 }).catch((e: unknown) => e);
    expect(LockTimeoutError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toBeUndefined();
  });

  it('a backend that throws instead of rejecting: every acquire form rejects with its error', async () => {
    const broken = new Error('broken backend');
    const { lock } = setup((b) => {
      b.throwSync = broken;
    });
    const controller = new AbortController();
    for (const acquiring of [
      lock.tryAcquire(),
      lock.acquire(),
      lock.acquire({ timeout: 100 }),
      lock.acquire({ signal: controller.signal }),
    ]) {
      await expect(acquiring).rejects.toBe(broken);
    }
    // The acquire with a signal armed before its attempt: it disarmed again (no listener left).
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a timeout behind a holder has no cause', async () => {
    const { lock } = setup((b) => {
      b.pollIntervalMs = 10;
    });
    const holder = await lock.acquire();
    const error = await lock.acquire({ timeout: 50 }).catch((e: unknown) => e);
    expect(LockTimeoutError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toBeUndefined();
    await holder.release();
  });
});

describe('diagnostics_channel', () => {
  it('publishes acquire, release and lost events', async () => {
    const events: [string, Record<string, unknown>][] = [];
    const listeners = ['lockkit:acquire', 'lockkit:release', 'lockkit:lost', 'lockkit:extend'].map(
      (name) => {
        const listener = (message: unknown) =>
          events.push([name, message as Record<string, unknown>]);
        subscribe(name, listener);
        return () => unsubscribe(name, listener);
      },
    );
    try {
      const { backend, lock } = setup((b) => {
        b.extendAnswer = 'not-owner';
      });
      const handle = await lock.acquire();
      await lostWithin(handle.signal, backend.leaseMs);
      await handle.release();
    } finally {
      for (const stop of listeners) stop();
    }
    expect(events.map(([name]) => name)).toEqual([
      'lockkit:acquire',
      'lockkit:extend',
      'lockkit:lost',
      'lockkit:release',
    ]);
    expect(events[0]![1]).toMatchObject({ backend: 'scripted', name: 'scripted', kind: 'mutex' });
    expect(events[2]![1]).toMatchObject({ reason: 'revoked' }); // the extension said "not ours"
    expect(events[3]![1]).toMatchObject({ stillHeld: false });
    // Every event of the hold names the same handle.
    expect(new Set(events.map(([, event]) => event['handle'])).size).toBe(1);
    expect(events[0]![1]['handle']).toBeDefined();
  });

  it.each([
    ['an extension that never answers', 'hang', 'expired'],
    ['failing extensions', 'throw', 'expired'],
  ] as const)('%s: lockkit:lost says the lease %s', async (_label, answer, reason) => {
    const lost: Record<string, unknown>[] = [];
    const listener = (message: unknown) => lost.push(message as Record<string, unknown>);
    subscribe('lockkit:lost', listener);
    try {
      const { backend, lock } = setup((b) => {
        b.extendAnswer = answer;
      });
      const handle = await lock.acquire();
      await lostWithin(handle.signal, 2 * backend.leaseMs);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ reason, handle });
    } finally {
      unsubscribe('lockkit:lost', listener);
    }
  });

  it('an acquire that fails with an error publishes outcome error (not aborted), with waitedMs', async () => {
    const failed: Record<string, unknown>[] = [];
    const listener = (message: unknown) => failed.push(message as Record<string, unknown>);
    subscribe('lockkit:acquire-failed', listener);
    try {
      const unreachable = new BackendUnavailableError('connection refused', { retryable: false });
      const { lock } = setup((b) => {
        b.unreachable = unreachable;
      });
      await expect(lock.tryAcquire()).rejects.toBe(unreachable);
      await expect(lock.acquire({ timeout: 1000 })).rejects.toBe(unreachable);
      expect(failed.map((event) => event['outcome'])).toEqual(['error', 'error']);
      for (const event of failed) {
        expect(event['error']).toBe(unreachable);
        expect(event['waitedMs']).toBeGreaterThanOrEqual(0);
      }
    } finally {
      unsubscribe('lockkit:acquire-failed', listener);
    }
  });

  it('a release that cannot reach the backend publishes lockkit:lost with reason release-failed', async () => {
    const events: [string, Record<string, unknown>][] = [];
    const listeners = ['lockkit:lost', 'lockkit:release'].map((name) => {
      const listener = (message: unknown) =>
        events.push([name, message as Record<string, unknown>]);
      subscribe(name, listener);
      return () => unsubscribe(name, listener);
    });
    try {
      const { backend, lock } = setup();
      const handle = await lock.acquire();
      backend.releaseFailure = new Error('connection reset');
      expect(await handle.release()).toBe(false);
      expect(events.map(([name]) => name)).toEqual(['lockkit:lost', 'lockkit:release']);
      expect(events[0]![1]).toMatchObject({ reason: 'release-failed', handle });
    } finally {
      for (const stop of listeners) stop();
    }
  });
});

describe('stalls', () => {
  it('an extension that starts after the lease ran out counts as lost, even if the server would extend', async () => {
    const { backend, lock } = setup();
    const handle = await lock.acquire();
    // Block the event loop past the whole lease, as a GC pause or a sync loop would.
    const blockedUntil = now() + backend.leaseMs * 1.5;
    while (now() < blockedUntil) {}
    const reason = (await lostWithin(handle.signal, backend.leaseMs)) as LockLostError;
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(backend.extendCalls).toBe(0); // it did not pretend to extend a lapsed lease
  });
});

describe('arming an acquire', () => {
  it('a timed acquire is cut at its deadline while its (unarmed) first attempt is still in flight', async () => {
    const { backend, lock } = setup((b) => {
      b.grantDelayMs = 300;
    });
    const error = await lock.acquire({ timeout: 30 }).catch((e: unknown) => e);
    expect(LockTimeoutError.isInstance(error)).toBe(true);
    expect(backend.attempts).toBe(1);
    expect(backend.free).toBe(true); // the attempt had not granted yet: the deadline cut it
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(backend.releases).toHaveLength(1); // its late grant was released, not leaked
    expect(backend.free).toBe(true);
  });

  it.each([
    ['acquire()', (lock: IDistributedLock) => lock.acquire()],
    ['acquire({ timeout })', (lock: IDistributedLock) => lock.acquire({ timeout: 5000 })],
    ['tryAcquire()', (lock: IDistributedLock) => lock.tryAcquire()],
  ])(
    'a %s whose first attempt is in flight at close() rejects, and its grant is released',
    async (_label, take) => {
      const { backend, provider, lock } = setup((b) => {
        b.grantDelayMs = 50;
      });
      const acquiring = take(lock);
      const outcome = acquiring.then(
        () => 'granted',
        (error: unknown) => error,
      );
      await provider.close();
      // close() waited for the attempt in flight, and its grant was released before it resolved
      expect(backend.releases).toHaveLength(1);
      const error = await outcome;
      expect((error as Error).name).toBe('LockAbortedError');
      expect(backend.attempts).toBe(1);
      expect(backend.releases).toHaveLength(1); // the grant nobody received
      expect(backend.free).toBe(true);
    },
  );

  it('a plain acquire() arms on its first failed attempt: close() then ends the wait', async () => {
    const { backend, provider, lock } = setup((b) => {
      b.free = false;
    });
    const watch = backend.watch.bind(backend);
    const watched = new Promise<void>((resolve) => {
      backend.watch = () => {
        resolve();
        return watch();
      };
    });
    const outcome = lock.acquire().then(
      () => 'granted',
      (error: unknown) => error,
    );
    await watched; // the first attempt failed: the acquire is armed and subscribes
    await provider.close();
    expect(((await outcome) as Error).name).toBe('LockAbortedError');
    expect(backend.watchers.size).toBe(0); // the watch was closed
  });
});

describe('DeadlineTimer', () => {
  it('fires each deadline once, earliest first, and never a deleted one', async () => {
    const timer = new DeadlineTimer();
    const fired: string[] = [];
    const start = now();
    const last = new Promise<void>((resolve) => {
      timer.add(start + 30, () => {
        fired.push('30');
        resolve();
      });
    });
    timer.add(start + 10, () => fired.push('10'));
    const deleted = timer.add(start + 20, () => fired.push('20'));
    timer.add(start + 5, () => fired.push('5'));
    timer.delete(deleted);
    await last;
    expect(fired).toEqual(['5', '10', '30']);
    expect(now() - start).toBeGreaterThanOrEqual(29);
  });
});

describe('DeadlineTimer, deleting', () => {
  it('a deadline deleted by another due in the same sweep never fires; deleting twice or after firing is harmless', async () => {
    const timer = new DeadlineTimer();
    const fired: string[] = [];
    const at = now() + 10;
    let second: ReturnType<DeadlineTimer['add']> | undefined;
    const first = timer.add(at, () => {
      fired.push('first');
      if (second) timer.delete(second); // due in this sweep too
    });
    second = timer.add(at, () => fired.push('second'));
    await new Promise<void>((resolve) => timer.add(at + 20, resolve));
    expect(fired).toEqual(['first']);
    timer.delete(first); // already fired
    timer.delete(second); // already deleted
    const third = new Promise<void>((resolve) => timer.add(now() + 5, resolve));
    await third; // the list still works
  });
});

describe('DeadlineTimer without keepAlive', () => {
  it('stopIfIdle leaves pending deadlines alone, and one added after a stop still fires', async () => {
    const timer = new DeadlineTimer({ keepAlive: false });
    const fired: string[] = [];
    const first = new Promise<void>((resolve) => {
      timer.add(now() + 10, () => {
        fired.push('first');
        resolve();
      });
    });
    timer.stopIfIdle(); // one is pending: nothing stops
    await first;
    // Armed for an early deadline, which is then deleted and the timer stopped: a later
    // deadline must arm a new timer (it would never fire if the stopped one still counted).
    const early = timer.add(now() + 20, () => fired.push('early'));
    timer.delete(early);
    timer.stopIfIdle();
    await new Promise<void>((resolve) => {
      timer.add(now() + 40, () => {
        fired.push('later');
        resolve();
      });
    });
    expect(fired).toEqual(['first', 'later']);
  });
});

describe('DeadlineTimer with a resolution', () => {
  it('sweeps at most once per resolution: a deadline due just after a sweep waits for the next', async () => {
    const timer = new DeadlineTimer({ keepAlive: false, resolutionMs: 60 });
    const gapMs = await new Promise<number>((resolve) => {
      timer.add(now() + 5, () => {
        // Added during the sweep, due 1 ms later: it waits for the next sweep.
        const sweptAt = now();
        timer.add(sweptAt + 1, () => resolve(now() - sweptAt));
      });
    });
    expect(gapMs).toBeGreaterThanOrEqual(59);
  });
});
