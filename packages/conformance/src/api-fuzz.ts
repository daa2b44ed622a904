/**
 * `fuzzApiSequences`: the public API driven by random command sequences against a model
 * (fast-check's model-based testing), for any provider.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  channelNames,
  type ILockProvider,
  type LockHandle,
  LockTimeoutError,
  ProviderClosedError,
} from '@lockkit/core';
import fc from 'fast-check';
import { expect } from 'vitest';

/** A mutex and a semaphore of two permits (different kinds never share a key). */
type Target = 'mutex' | 'semaphore';
const capacity: Record<Target, number> = { mutex: 1, semaphore: 2 };

interface Model {
  closed: boolean;
  readonly held: Record<Target, number>;
}

interface Real {
  readonly provider: ILockProvider;
  /** This sequence's lock names (unique, so a server's state from earlier runs never counts). */
  readonly names: Record<Target, string>;
  readonly handles: Record<Target, LockHandle[]>;
  /** The highest fencing token seen per target: every grant must be above it. */
  readonly lastToken: Record<Target, bigint>;
}

type Command = fc.AsyncCommand<Model, Real>;

function acquireOn(real: Real, target: Target) {
  return target === 'mutex'
    ? real.provider.createLock(real.names.mutex)
    : real.provider.createSemaphore(real.names.semaphore, capacity.semaphore);
}

let timeScale = 1;
const ms = (value: number): number => value * timeScale;

/** Resolves when some acquire in this process starts waiting (core's 'lockkit:wait' event). */
function nextWait(): Promise<void> {
  return new Promise((resolve) => {
    const onWait = (): void => {
      unsubscribe(channelNames.wait, onWait);
      resolve();
    };
    subscribe(channelNames.wait, onWait);
  });
}

function take(real: Real, target: Target, handle: LockHandle): void {
  expect(handle.fencingToken).toBeGreaterThan(real.lastToken[target]);
  expect(handle.signal.aborted).toBe(false);
  real.lastToken[target] = handle.fencingToken;
  real.handles[target].push(handle);
}

const isFull = (model: Model, target: Target): boolean => model.held[target] >= capacity[target];

/** tryAcquire(): a handle exactly when the model has room. */
class TryAcquire implements Command {
  constructor(readonly target: Target) {}
  check = (model: Readonly<Model>): boolean => !model.closed;
  async run(model: Model, real: Real): Promise<void> {
    const handle = await acquireOn(real, this.target).tryAcquire();
    expect(handle !== null).toBe(!isFull(model, this.target));
    if (handle) {
      take(real, this.target, handle);
      model.held[this.target] += 1;
    }
  }
  toString = (): string => `tryAcquire(${this.target})`;
}

/** acquire({ timeout }) on a primitive with room: granted at once. */
class AcquireFree implements Command {
  constructor(readonly target: Target) {}
  check = (model: Readonly<Model>): boolean => !model.closed && !isFull(model, this.target);
  async run(model: Model, real: Real): Promise<void> {
    take(real, this.target, await acquireOn(real, this.target).acquire({ timeout: ms(5000) }));
    model.held[this.target] += 1;
  }
  toString = (): string => `acquire(${this.target})`;
}

/** On a full primitive: acquire times out with LockTimeoutError, tryAcquire with null. */
class TimeOut implements Command {
  constructor(readonly target: Target) {}
  check = (model: Readonly<Model>): boolean => !model.closed && isFull(model, this.target);
  async run(_model: Model, real: Real): Promise<void> {
    const primitive = acquireOn(real, this.target);
    await expect(primitive.acquire({ timeout: 15 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await primitive.tryAcquire({ timeout: 15 })).toBeNull();
  }
  toString = (): string => `timeout(${this.target})`;
}

/** A wait aborted mid-way (or before it started) rejects with the signal's own reason. */
class Abort implements Command {
  constructor(
    readonly target: Target,
    readonly before: boolean,
  ) {}
  check = (model: Readonly<Model>): boolean =>
    !model.closed && (this.before || isFull(model, this.target));
  async run(model: Model, real: Real): Promise<void> {
    const reason = new Error('fuzz abort');
    const controller = new AbortController();
    if (this.before) controller.abort(reason);
    const waiting = this.before ? Promise.resolve() : nextWait();
    const attempt = acquireOn(real, this.target).acquire({ signal: controller.signal });
    await waiting;
    controller.abort(reason);
    await expect(attempt).rejects.toBe(reason);
    // Nothing leaked: the model's room is still there (or still not).
    const probe = await acquireOn(real, this.target).tryAcquire();
    expect(probe !== null).toBe(!isFull(model, this.target));
    await probe?.release();
  }
  toString = (): string => `abort(${this.target}, ${this.before ? 'before' : 'while waiting'})`;
}

/** release() → true, twice (idempotent), also after close(); with `wakeWaiter`, a waiter queued first gets it. */
class Release implements Command {
  constructor(
    readonly target: Target,
    readonly pick: number,
    readonly wakeWaiter: boolean,
  ) {}
  check = (model: Readonly<Model>): boolean =>
    model.held[this.target] > 0 &&
    (!this.wakeWaiter || (!model.closed && isFull(model, this.target)));
  async run(model: Model, real: Real): Promise<void> {
    const handles = real.handles[this.target];
    const [handle] = handles.splice(this.pick % handles.length, 1);
    let waiter: Promise<LockHandle> | undefined;
    if (this.wakeWaiter) {
      const waiting = nextWait();
      waiter = acquireOn(real, this.target).acquire({ timeout: ms(10_000) });
      await waiting;
    }
    // No fault here, so the lock was ours up to the release: true — also after close(),
    // which released it (release() returns the first call's result).
    expect(await handle!.release()).toBe(true);
    expect(await handle!.release()).toBe(true);
    model.held[this.target] -= 1;
    if (waiter) {
      take(real, this.target, await waiter);
      model.held[this.target] += 1;
    }
  }
  toString = (): string =>
    `release(${this.target}#${this.pick}${this.wakeWaiter ? ', waiter queued' : ''})`;
}

/** close() resolves; every later call rejects with ProviderClosedError. */
class Close implements Command {
  check = (model: Readonly<Model>): boolean => !model.closed;
  async run(model: Model, real: Real): Promise<void> {
    const created = real.provider.createSemaphore(real.names.semaphore, capacity.semaphore);
    await real.provider.close();
    model.closed = true;
    await expect(created.tryAcquire()).rejects.toBeInstanceOf(ProviderClosedError);
    expect(() => real.provider.createLock(real.names.mutex)).toThrow(ProviderClosedError);
  }
  toString = (): string => 'close()';
}

const target = fc.constantFrom<Target>('mutex', 'semaphore');
/** Each step picks one command; close() is rare (after it, only releases are left to do). */
const commands = [
  fc.oneof(
    { arbitrary: target.map((on): Command => new TryAcquire(on)), weight: 4 },
    { arbitrary: target.map((on): Command => new AcquireFree(on)), weight: 3 },
    { arbitrary: target.map((on): Command => new TimeOut(on)), weight: 2 },
    {
      arbitrary: fc
        .tuple(target, fc.boolean())
        .map(([on, before]): Command => new Abort(on, before)),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(target, fc.nat(3), fc.boolean())
        .map(([on, pick, wake]): Command => new Release(on, pick, wake)),
      weight: 4,
    },
    { arbitrary: fc.constant<Command>(new Close()), weight: 1 },
  ),
];

/** Options of {@link fuzzApiSequences}. */
export interface ApiFuzzOptions {
  /** A fresh provider per sequence (it is closed after the sequence, also by the sequence). */
  readonly createProvider: () => ILockProvider | Promise<ILockProvider>;
  /** Called after each sequence's provider closed (remove a temporary directory, …). */
  readonly cleanup?: (provider: ILockProvider) => void | Promise<void>;
  /** Sequences to run. @defaultValue 60 */
  readonly numRuns?: number;
  /** Commands per sequence at most. @defaultValue 20 */
  readonly maxCommands?: number;
  /** fast-check's seed (a failure prints it). @defaultValue the `FUZZ_SEED` environment variable, else 24 */
  readonly seed?: number;
  /** Multiplies the waits' timeouts. @defaultValue 1 */
  readonly timeScale?: number;
}

/**
 * Property-based check of the public API: random sequences of acquire / tryAcquire / timeout /
 * abort / release / close on a mutex and a semaphore of two permits, each step checked against
 * a model that knows only how many holders each admits (grants exactly when there is room,
 * tokens increase, aborts reject with the signal's reason and leak nothing, releases are
 * idempotent, a released waiter queued first is granted, close ends everything). Call it
 * inside a vitest `it()`. A failure prints fast-check's seed and the shrunk sequence.
 * Resolves how many commands ran.
 */
export async function fuzzApiSequences(options: ApiFuzzOptions): Promise<number> {
  const numRuns = options.numRuns ?? 60;
  const maxCommands = options.maxCommands ?? 20;
  const seed = options.seed ?? Number(process.env['FUZZ_SEED'] ?? 24);
  timeScale = options.timeScale ?? 1;
  const run = randomUUID().slice(0, 8);
  let sequences = 0;
  let ran = 0;
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands, size: 'max' }), async (sequence) => {
      const provider = await options.createProvider();
      sequences += 1;
      const real: Real = {
        provider,
        names: {
          mutex: `lockkit-fuzz:${run}:${sequences}:m`,
          semaphore: `lockkit-fuzz:${run}:${sequences}:s`,
        },
        handles: { mutex: [], semaphore: [] },
        lastToken: { mutex: 0n, semaphore: 0n },
      };
      try {
        await fc.asyncModelRun(
          () => ({ model: { closed: false, held: { mutex: 0, semaphore: 0 } }, real }),
          sequence,
        );
        // The sequence prints the commands that ran (their check passed).
        ran += String(sequence)
          .split(',')
          .filter((step) => step.trim() !== '').length;
      } finally {
        await provider.close();
        await options.cleanup?.(provider);
      }
    }),
    { numRuns, seed },
  );
  // Not a vacuous pass: on average at least 5 commands ran per sequence.
  expect(ran).toBeGreaterThan(numRuns * 5);
  return ran;
}
