import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  type AcquireOptions,
  channelNames,
  type ILockProvider,
  type LockHandle,
  type LockKind,
} from '@lockkit/core';
import { afterEach } from 'vitest';
import type { ConformanceOptions, ProviderOptions } from './options.js';

/** The acquire surface of one primitive in one mode. */
export interface Acquirer {
  acquire(options?: AcquireOptions): Promise<LockHandle>;
  tryAcquire(options?: AcquireOptions): Promise<LockHandle | null>;
  run<T>(fn: (handle: LockHandle) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
}

/** What the child holder process takes. */
export interface LockSpec {
  readonly kind: LockKind;
  readonly maxCount: number;
}

export function acquirerFor(provider: ILockProvider, name: string, spec: LockSpec): Acquirer {
  switch (spec.kind) {
    case 'mutex': {
      const lock = provider.createLock(name);
      return {
        acquire: (o) => lock.acquire(o),
        tryAcquire: (o) => lock.tryAcquire(o),
        run: (fn, o) => lock.withLock(fn, o),
      };
    }
    case 'read':
    case 'write': {
      const lock = provider.createReadWriteLock(name);
      return spec.kind === 'read'
        ? {
            acquire: (o) => lock.acquireRead(o),
            tryAcquire: (o) => lock.tryAcquireRead(o),
            run: (fn, o) => lock.withReadLock(fn, o),
          }
        : {
            acquire: (o) => lock.acquireWrite(o),
            tryAcquire: (o) => lock.tryAcquireWrite(o),
            run: (fn, o) => lock.withWriteLock(fn, o),
          };
    }
    case 'semaphore': {
      const semaphore = provider.createSemaphore(name, spec.maxCount);
      return {
        acquire: (o) => semaphore.acquire(o),
        tryAcquire: (o) => semaphore.tryAcquire(o),
        run: (fn, o) => semaphore.withPermit(fn, o),
      };
    }
  }
}

/**
 * A way of using a primitive that the mutex cases run against: the contender (`spec`), what
 * blocks it (`blocker`), and permits to take beforehand (`prefill`).
 */
export interface Subject {
  readonly label: string;
  readonly spec: LockSpec;
  readonly blocker: LockSpec;
  /** Two contenders exclude each other. */
  readonly exclusive: boolean;
  /** Permits of `spec` held (by another provider) before the case starts. */
  readonly prefill: number;
}

export const subjects: readonly Subject[] = [
  {
    label: 'mutex',
    spec: { kind: 'mutex', maxCount: 1 },
    blocker: { kind: 'mutex', maxCount: 1 },
    exclusive: true,
    prefill: 0,
  },
  {
    label: 'write lock',
    spec: { kind: 'write', maxCount: 1 },
    blocker: { kind: 'write', maxCount: 1 },
    exclusive: true,
    prefill: 0,
  },
  {
    label: 'read lock',
    spec: { kind: 'read', maxCount: Number.POSITIVE_INFINITY },
    blocker: { kind: 'write', maxCount: 1 },
    exclusive: false,
    prefill: 0,
  },
  {
    label: 'semaphore(1)',
    spec: { kind: 'semaphore', maxCount: 1 },
    blocker: { kind: 'semaphore', maxCount: 1 },
    exclusive: true,
    prefill: 0,
  },
  {
    label: 'semaphore(3) with 2 permits taken',
    spec: { kind: 'semaphore', maxCount: 3 },
    blocker: { kind: 'semaphore', maxCount: 3 },
    exclusive: true,
    prefill: 2,
  },
];

/** Per-test state: providers to close, unique names, timing bounds. */
export class Fixture {
  readonly options: ConformanceOptions;
  readonly timeScale: number;
  readonly #providers = new Set<ILockProvider>();
  readonly #cleanups: (() => Promise<unknown>)[] = [];
  readonly #run = randomUUID().slice(0, 8);
  #counter = 0;

  constructor(options: ConformanceOptions) {
    this.options = options;
    this.timeScale = options.timeScale ?? 1;
    afterEach(async () => {
      for (const cleanup of this.#cleanups.splice(0).reverse()) await cleanup();
      const providers = [...this.#providers];
      this.#providers.clear();
      await Promise.all(providers.map((provider) => provider.close()));
    });
  }

  /** A fresh provider, closed after the test. */
  async provider(options?: ProviderOptions): Promise<ILockProvider> {
    const provider = await this.options.createProvider(options);
    this.#providers.add(provider);
    return provider;
  }

  /** Closes `provider` (created outside {@link provider}) after the test. */
  adopt(provider: ILockProvider): void {
    this.#providers.add(provider);
  }

  /** Forget a provider the test closes itself. */
  untrack(provider: ILockProvider): void {
    this.#providers.delete(provider);
  }

  /** Runs `cleanup` after the test (before providers close), in reverse order. */
  defer(cleanup: () => Promise<unknown>): void {
    this.#cleanups.push(cleanup);
  }

  /** A name no other test or run uses. */
  name(label: string): string {
    this.#counter += 1;
    return `lockkit-conformance:${this.#run}:${this.#counter}:${label}`;
  }

  /** ms scaled by timeScale. */
  ms(value: number): number {
    return value * this.timeScale;
  }

  /** Takes `subject.prefill` permits on a separate provider for the rest of the test. */
  async prefill(subject: Subject, name: string): Promise<void> {
    if (subject.prefill === 0) return;
    const filler = acquirerFor(await this.provider(), name, subject.spec);
    for (let i = 0; i < subject.prefill; i++) {
      const handle = await filler.acquire({ timeout: this.ms(5000) });
      this.defer(() => handle.release());
    }
  }

  /** Duration of one uncontended acquire+release on `provider` (median of 5, warm). */
  async roundTripMs(provider: ILockProvider): Promise<number> {
    const lock = provider.createLock(this.name('rtt'));
    const samples: number[] = [];
    for (let i = 0; i < 6; i++) {
      const started = performance.now();
      const handle = await lock.acquire({ timeout: this.ms(5000) });
      await handle.release();
      if (i > 0) samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    return samples[2]!;
  }
}

/** Resolves when `condition()` is true, polling; rejects after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resolves with `signal.reason` when it aborts; rejects after `timeoutMs`. */
export function abortedWithin(signal: AbortSignal, timeoutMs: number): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`signal did not abort within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve(signal.reason);
      },
      { once: true },
    );
  });
}

/** Tracks whether a promise has settled, without awaiting it. */
export function track<T>(promise: Promise<T>): {
  readonly settled: boolean;
  readonly promise: Promise<T>;
} {
  const state = { settled: false, promise };
  promise.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}

/** Yields to the event loop `turns` times (lets other async work interleave). */
export async function yieldTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Title with the reason when the case cannot run. */
export function titled(title: string, skipReason: string | undefined): string {
  return skipReason ? `${title} — skipped: ${skipReason}` : title;
}

/** Resolves at the next `lockkit:wait` event for a lock whose name ends with `name`. */
export function nextWaitFor(name: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      // endsWith: a name-prefix decorator publishes the provider-level (prefixed) name.
      if (!(message as { name?: string }).name?.endsWith(name)) return;
      unsubscribe(channelNames.wait, listener);
      resolve();
    };
    subscribe(channelNames.wait, listener);
  });
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
