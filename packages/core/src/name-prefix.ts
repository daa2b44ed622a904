import type { Grant } from './backend.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { grantOf } from './lock-handle.js';
import type { LockState } from './lock-state.js';
import type {
  AcquireOptions,
  IDistributedLock,
  IElection,
  ILockProvider,
  IReadWriteLock,
  ISemaphore,
  LockHandle,
  SemaphoreAcquireOptions,
} from './types.js';
import { validateName } from './validation.js';

const inner = new WeakMap<LockHandle, LockHandle>();

/** The handle a prefixed handle wraps (handles not wrapped are returned as they are). */
export function unwrapHandle(handle: LockHandle): LockHandle {
  return inner.get(handle) ?? handle;
}

/** Like `grantOf`, through name-prefix wrappers. */
export function grantBehind<G extends Grant = Grant>(
  handle: LockHandle,
): ReturnType<typeof grantOf<G>> {
  return grantOf<G>(unwrapHandle(handle));
}

function rename(handle: LockHandle | null, name: string): LockHandle | null {
  if (!handle) return null;
  const wrapped: LockHandle = {
    name,
    kind: handle.kind,
    fencingToken: handle.fencingToken,
    signal: handle.signal,
    get validUntil(): number {
      return handle.validUntil;
    },
    extend: (ms) => handle.extend(ms),
    release: () => handle.release(),
    export: () => handle.export(),
    [Symbol.asyncDispose]: () => handle[Symbol.asyncDispose](),
  };
  inner.set(wrapped, handle);
  return wrapped;
}

type Body<T> = (handle: LockHandle) => Promise<T> | T;

/**
 * Decorates any provider so every name gets `prefix` in front: two applications (or
 * tenants) sharing one provider stay isolated. Handles report the caller's name. The
 * conformance suite re-runs itself through this decorator.
 */
export function withNamePrefix(provider: ILockProvider, prefix: string): ILockProvider {
  if (typeof prefix !== 'string') {
    throw new InvalidArgumentError(`prefix must be a string, got ${typeof prefix}`);
  }
  const wrap = async (
    name: string,
    handle: Promise<LockHandle | null>,
  ): Promise<LockHandle | null> => rename(await handle, name);
  // inspect() reports the caller's name, not the prefixed one.
  const renamed = async (name: string, state: Promise<LockState>): Promise<LockState> =>
    Object.freeze({ ...(await state), name });
  const withHandle = async <T>(
    name: string,
    acquire: (options?: AcquireOptions) => Promise<LockHandle>,
    fn: Body<T>,
    options?: AcquireOptions,
  ): Promise<T> => {
    const handle = (await wrap(name, acquire(options))) as LockHandle;
    try {
      return await fn(handle);
    } finally {
      await handle.release();
    }
  };
  return {
    backend: provider.backend,
    capabilities: provider.capabilities,
    createLock(name): IDistributedLock {
      const lock = provider.createLock(prefix + validateName(name));
      const acquire = (options?: AcquireOptions): Promise<LockHandle> =>
        wrap(name, lock.acquire(options)) as Promise<LockHandle>;
      return {
        name,
        inspect: () => renamed(name, lock.inspect()),
        forceRelease: () => lock.forceRelease(),
        acquire,
        tryAcquire: (options) => wrap(name, lock.tryAcquire(options)),
        withLock: (fn, options) => withHandle(name, acquire, fn, options),
        resume: (token) => wrap(name, lock.resume(token)) as Promise<LockHandle>,
      };
    },
    createReadWriteLock(name): IReadWriteLock {
      const lock = provider.createReadWriteLock(prefix + validateName(name));
      const acquireRead = (options?: AcquireOptions): Promise<LockHandle> =>
        wrap(name, lock.acquireRead(options)) as Promise<LockHandle>;
      const acquireWrite = (options?: AcquireOptions): Promise<LockHandle> =>
        wrap(name, lock.acquireWrite(options)) as Promise<LockHandle>;
      return {
        name,
        inspect: () => renamed(name, lock.inspect()),
        forceRelease: () => lock.forceRelease(),
        acquireRead,
        tryAcquireRead: (options) => wrap(name, lock.tryAcquireRead(options)),
        withReadLock: (fn, options) => withHandle(name, acquireRead, fn, options),
        acquireWrite,
        tryAcquireWrite: (options) => wrap(name, lock.tryAcquireWrite(options)),
        withWriteLock: (fn, options) => withHandle(name, acquireWrite, fn, options),
        resume: (token) => wrap(name, lock.resume(token)) as Promise<LockHandle>,
      };
    },
    createSemaphore(name, maxCount): ISemaphore {
      const semaphore = provider.createSemaphore(prefix + validateName(name), maxCount);
      const acquire = (options?: SemaphoreAcquireOptions): Promise<LockHandle> =>
        wrap(name, semaphore.acquire(options)) as Promise<LockHandle>;
      return {
        name,
        maxCount: semaphore.maxCount,
        inspect: () => renamed(name, semaphore.inspect()),
        forceRelease: () => semaphore.forceRelease(),
        acquire,
        tryAcquire: (options) => wrap(name, semaphore.tryAcquire(options)),
        withPermit: (fn, options) => withHandle(name, acquire, fn, options),
        resume: (token) => wrap(name, semaphore.resume(token)) as Promise<LockHandle>,
      };
    },
    createElection(name, options): IElection {
      const election = provider.createElection(prefix + validateName(name), options);
      return {
        name,
        owner: election.owner,
        campaign: (campaignOptions) => election.campaign(campaignOptions),
        current: () => election.current(),
        leader: () => election.leader(),
        events: (eventsOptions) => election.events(eventsOptions),
      };
    },
    close: () => provider.close(),
    [Symbol.asyncDispose]: () => provider.close(),
  };
}
