/**
 * Inspection and operator breaks (`lock.inspect()`, `lock.forceRelease()`): the owner label
 * every hold records, and the one place that turns a backend's reading into a
 * {@link LockState}.
 *
 * @module
 */
import { hostname } from 'node:os';
import type { LockBackend, LockRequest } from './backend.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import type { LockState } from './lock-state.js';
import type { LockKind } from './types.js';

/** Which primitive a request's kind belongs to. */
export function primitiveOf(kind: LockKind): LockState['primitive'] {
  return kind === 'read' || kind === 'write' ? 'read-write' : kind;
}

let defaultOwner: string | undefined;

/** `<hostname>:<pid>`, read once: the default owner label of providers and elections. */
export function defaultOwnerLabel(): string {
  defaultOwner ??= `${hostname()}:${process.pid}`;
  return defaultOwner;
}

/** Reads a lock through its backend. `request.kind` is `write` for a read-write lock. */
export async function inspectLock(backend: LockBackend, request: LockRequest): Promise<LockState> {
  if (!backend.inspect || backend.capabilities.inspection !== true) {
    throw unsupported(backend, 'inspect');
  }
  const reading = await backend.inspect(request);
  const holders = Object.freeze([...reading.holders]);
  let permitsFree: number | undefined;
  if (request.kind === 'semaphore') {
    const taken = holders.reduce((sum, holder) => sum + holder.permits, 0);
    permitsFree = Math.max(0, request.maxCount - taken);
  }
  return Object.freeze({
    name: request.name,
    primitive: primitiveOf(request.kind),
    held: holders.length > 0,
    holders,
    waiting: reading.waiting,
    permitsFree,
  });
}

/** Breaks every hold of a lock through its backend. */
export function forceReleaseLock(backend: LockBackend, request: LockRequest): Promise<number> {
  if (!backend.forceRelease || backend.capabilities.inspection !== true) {
    return Promise.reject(unsupported(backend, 'forceRelease'));
  }
  return backend.forceRelease(request);
}

function unsupported(backend: LockBackend, method: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `${method}() is not supported by the ${backend.backend} backend (capabilities.inspection is not true)`,
  );
}
