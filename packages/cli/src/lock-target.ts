import type { AcquireOptions, ILockProvider, LockHandle } from 'lockkit';
import type { LockTarget } from './invocation.js';

/** One way of taking a lock: the mutex, a side of the RW lock, or a semaphore permit. */
export interface Acquirer {
  /** `mutex`, `read`, `write` or `semaphore`, as `LOCKKIT_LOCK_KIND` says. */
  readonly kind: string;
  /** How the lock is described in messages, e.g. `semaphore "exports" (4 permits)`. */
  readonly description: string;
  tryAcquire(options: AcquireOptions): Promise<LockHandle | null>;
  acquire(options: AcquireOptions): Promise<LockHandle>;
}

/** The {@link Acquirer} for `target` on `provider`. */
export function acquirerFor(provider: ILockProvider, name: string, target: LockTarget): Acquirer {
  const quoted = JSON.stringify(name);
  switch (target.kind) {
    case 'mutex': {
      const lock = provider.createLock(name);
      return {
        kind: 'mutex',
        description: `lock ${quoted}`,
        tryAcquire: (options) => lock.tryAcquire(options),
        acquire: (options) => lock.acquire(options),
      };
    }
    case 'read': {
      const lock = provider.createReadWriteLock(name);
      return {
        kind: 'read',
        description: `read lock ${quoted}`,
        tryAcquire: (options) => lock.tryAcquireRead(options),
        acquire: (options) => lock.acquireRead(options),
      };
    }
    case 'write': {
      const lock = provider.createReadWriteLock(name);
      return {
        kind: 'write',
        description: `write lock ${quoted}`,
        tryAcquire: (options) => lock.tryAcquireWrite(options),
        acquire: (options) => lock.acquireWrite(options),
      };
    }
    case 'semaphore': {
      const semaphore = provider.createSemaphore(name, target.maxCount);
      return {
        kind: 'semaphore',
        description: `semaphore ${quoted} (${target.maxCount} permits)`,
        tryAcquire: (options) => semaphore.tryAcquire(options),
        acquire: (options) => semaphore.acquire(options),
      };
    }
  }
}
