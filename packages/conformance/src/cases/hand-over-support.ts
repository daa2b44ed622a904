import type { ILockProvider, LockHandle } from '@lockkit/core';
import type { LockSpec } from '../support.js';

/** Resumes `token` through the primitive of `spec` named `name`. */
export function resume(
  provider: ILockProvider,
  name: string,
  spec: LockSpec,
  token: string,
): Promise<LockHandle> {
  if (spec.kind === 'mutex') return provider.createLock(name).resume(token);
  if (spec.kind === 'semaphore') return provider.createSemaphore(name, spec.maxCount).resume(token);
  return provider.createReadWriteLock(name).resume(token);
}

/** The holds handed over, and what a third contender that must be shut out asks for. */
export const cases: readonly { readonly spec: LockSpec; readonly rival: LockSpec }[] = [
  { spec: { kind: 'mutex', maxCount: 1 }, rival: { kind: 'mutex', maxCount: 1 } },
  { spec: { kind: 'write', maxCount: 1 }, rival: { kind: 'read', maxCount: Infinity } },
  { spec: { kind: 'read', maxCount: Infinity }, rival: { kind: 'write', maxCount: 1 } },
  { spec: { kind: 'semaphore', maxCount: 1 }, rival: { kind: 'semaphore', maxCount: 1 } },
];
