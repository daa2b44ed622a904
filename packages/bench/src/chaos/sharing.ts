import type { LockKind } from '@lockkit/core';

/**
 * Who may hold a lock name at the same time. A mutex (and an election's term) and an RW
 * lock's writer exclude everyone; RW readers exclude only writers; a semaphore's permits
 * exclude each other once more than `maxCount` are held. `capacity` is how many mutually
 * conflicting holders may hold at once: 1, or the semaphore's `maxCount`.
 */
export interface Sharing {
  readonly capacity: number;
}

/** One holder at a time (mutex, election, RW lock). */
export const exclusive: Sharing = { capacity: 1 };

/** Whether holders of these two kinds may not hold one name at the same time. */
export function conflicts(first: LockKind, second: LockKind): boolean {
  return !(first === 'read' && second === 'read');
}

/** Whether a grant of this kind excludes every other holder (a mutex or a writer). */
export function excludesAll(kind: LockKind): boolean {
  return kind === 'mutex' || kind === 'write';
}
