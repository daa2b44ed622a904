import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { LockTimeoutError } from './errors/lock-timeout-error.js';
import { now } from './timing.js';
import type {
  AcquireOptions,
  IDistributedLock,
  IReadWriteLock,
  ISemaphore,
  LockHandle,
  LockKind,
} from './types.js';
import { validateAcquireOptions } from './validation.js';

/** One member of a composite acquire: a mutex, a semaphore permit, or a RW lock in a mode. */
export type AcquireTarget =
  | IDistributedLock
  | ISemaphore
  | { readonly readWriteLock: IReadWriteLock; readonly mode: 'read' | 'write' };

/**
 * The handle of a composite acquire. `validUntil` is the earliest of the members'; `extend()`
 * extends every member (each must be on a backend whose lease is chosen per hold); `export()`
 * is an `InvalidArgumentError` (export the member handles one by one).
 */
export interface CompositeLockHandle extends LockHandle {
  /** The member handles, in acquisition (global) order. */
  readonly handles: readonly LockHandle[];
}

interface Member {
  readonly name: string;
  readonly kind: LockKind;
  readonly tryAcquire: (options: AcquireOptions) => Promise<LockHandle | null>;
}

const kindRank: Record<LockKind, number> = { mutex: 0, read: 1, write: 1, semaphore: 2 };

function toMember(target: AcquireTarget): Member {
  if (typeof target !== 'object' || target === null) {
    throw new InvalidArgumentError(
      'acquireAll targets must be locks, semaphores or { readWriteLock, mode }',
    );
  }
  if ('readWriteLock' in target) {
    const { readWriteLock, mode } = target;
    if (mode !== 'read' && mode !== 'write') {
      throw new InvalidArgumentError(
        `acquireAll RW mode must be 'read' or 'write', got ${String(mode)}`,
      );
    }
    return {
      name: readWriteLock.name,
      kind: mode,
      tryAcquire: (options) =>
        mode === 'read'
          ? readWriteLock.tryAcquireRead(options)
          : readWriteLock.tryAcquireWrite(options),
    };
  }
  const kind: LockKind = 'maxCount' in target ? 'semaphore' : 'mutex';
  return { name: target.name, kind, tryAcquire: (options) => target.tryAcquire(options) };
}

/**
 * Acquires every target or none: members are taken in one global order (name, then kind),
 * so two callers asking for the same set in different orders cannot deadlock; one deadline
 * is shared; a failure releases what was taken. The composite handle's `fencingToken` is
 * the largest member token and its `signal` aborts when any member is lost.
 * Rejects with LockTimeoutError on timeout.
 */
export async function acquireAll(
  targets: readonly AcquireTarget[],
  options?: AcquireOptions,
): Promise<CompositeLockHandle> {
  return (await acquireMembers(
    targets,
    options,
    Number.POSITIVE_INFINITY,
    true,
  )) as CompositeLockHandle;
}

/** Like {@link acquireAll} but resolves null on timeout; the timeout defaults to 0. */
export function tryAcquireAll(
  targets: readonly AcquireTarget[],
  options?: AcquireOptions,
): Promise<CompositeLockHandle | null> {
  return acquireMembers(targets, options, 0, false);
}

async function acquireMembers(
  targets: readonly AcquireTarget[],
  options: AcquireOptions | undefined,
  defaultTimeoutMs: number,
  throwOnTimeout: boolean,
): Promise<CompositeLockHandle | null> {
  const { timeoutMs, signal } = validateAcquireOptions(options, defaultTimeoutMs);
  if (!Array.isArray(targets) || targets.length === 0) {
    throw new InvalidArgumentError('acquireAll needs a non-empty array of targets');
  }
  const members = targets
    .map(toMember)
    .sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : kindRank[a.kind] - kindRank[b.kind],
    );
  for (let i = 1; i < members.length; i++) {
    const [previous, current] = [members[i - 1]!, members[i]!];
    if (previous.name === current.name && kindRank[previous.kind] === kindRank[current.kind]) {
      throw new InvalidArgumentError(
        `acquireAll got "${current.name}" twice; locks are not reentrant, so it would wait on itself`,
      );
    }
  }
  if (signal?.aborted) throw signal.reason;
  const deadline = now() + timeoutMs;
  const held: LockHandle[] = [];
  try {
    for (const member of members) {
      const remaining =
        timeoutMs === Number.POSITIVE_INFINITY ? timeoutMs : Math.max(0, deadline - now());
      const handle = await member.tryAcquire({ timeout: remaining, signal });
      if (!handle) {
        await releaseAll(held);
        if (throwOnTimeout)
          throw new LockTimeoutError(members.map((m) => m.name).join(', '), timeoutMs);
        return null;
      }
      held.push(handle);
    }
  } catch (error) {
    if (!LockTimeoutError.isInstance(error)) await releaseAll(held);
    throw error;
  }
  return composite(held);
}

async function releaseAll(handles: readonly LockHandle[]): Promise<boolean> {
  const results = await Promise.all([...handles].reverse().map((handle) => handle.release()));
  return results.every(Boolean);
}

function composite(handles: readonly LockHandle[]): CompositeLockHandle {
  const controller = new AbortController();
  const unlink: (() => void)[] = [];
  for (const handle of handles) {
    const onLost = (): void => controller.abort(handle.signal.reason);
    if (handle.signal.aborted) onLost();
    handle.signal.addEventListener('abort', onLost, { once: true });
    unlink.push(() => handle.signal.removeEventListener('abort', onLost));
  }
  let released: Promise<boolean> | undefined;
  const release = (): Promise<boolean> => {
    released ??= (async () => {
      for (const stop of unlink) stop();
      return (await releaseAll(handles)) && !controller.signal.aborted;
    })();
    return released;
  };
  return {
    name: handles.map((handle) => handle.name).join(', '),
    kind: 'mutex',
    handles,
    fencingToken: largestToken(handles),
    signal: controller.signal,
    get validUntil(): number {
      return Math.min(...handles.map((handle) => handle.validUntil));
    },
    // Every member, each to the same length; true only if every one was extended.
    extend: async (ms?: number) =>
      (await Promise.all(handles.map((handle) => handle.extend(ms)))).every(Boolean),
    release,
    export: () => {
      throw new InvalidArgumentError('A composite handle cannot be exported: export its handles');
    },
    [Symbol.asyncDispose]: () => release().then(() => undefined),
  };
}

function largestToken(handles: readonly LockHandle[]): bigint {
  let largest = 0n;
  for (const handle of handles) if (handle.fencingToken > largest) largest = handle.fencingToken;
  return largest;
}
