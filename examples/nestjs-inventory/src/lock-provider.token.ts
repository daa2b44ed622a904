import type { ILockProvider as LockProviderContract } from 'lockkit';

/**
 * The injection token of the lock provider, named after the interface it stands for:
 * `@Inject(ILockProvider) locks: ILockProvider`. Which backend is behind it is a matter of
 * configuration (`LOCK_URL`), never of the code that uses it.
 */
export const ILockProvider: unique symbol = Symbol('ILockProvider');
/** The lockkit provider interface (mutex, read-write lock, semaphore, leader election). */
export type ILockProvider = LockProviderContract;
