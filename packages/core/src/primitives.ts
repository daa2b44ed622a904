import type { LockState } from './lock-state.js';
import type {
  AcquireOptions,
  IDistributedLock,
  IReadWriteLock,
  ISemaphore,
  LockHandle,
  LockKind,
  SemaphoreAcquireOptions,
} from './types.js';

/** Runs one acquire for a primitive; `try` mode defaults to timeout 0 and resolves null. */
export type AcquireFunction = (
  kind: LockKind,
  name: string,
  maxCount: number,
  options: AcquireOptions | undefined,
  mode: 'acquire' | 'try',
) => Promise<LockHandle | null>;

/** Reads or breaks a lock's holds (`kind` is `write` for a read-write lock). */
export interface AdminFunctions {
  inspect(kind: LockKind, name: string, maxCount: number): Promise<LockState>;
  forceRelease(kind: LockKind, name: string, maxCount: number): Promise<number>;
  /** Resumes a hand-over token (hand-over.ts) through a primitive accepting `kinds`. */
  resume(
    kinds: readonly LockKind[],
    name: string,
    maxCount: number,
    token: string,
  ): Promise<LockHandle>;
}

type Body<T> = (handle: LockHandle) => Promise<T> | T;

async function runHeld<T>(handle: Promise<LockHandle | null>, fn: Body<T>): Promise<T> {
  const held = (await handle) as LockHandle; // 'acquire' mode never resolves null
  try {
    return await fn(held);
  } finally {
    await held.release();
  }
}

/** Core's mutex: every call goes through the provider's shared acquire policy. */
export class DistributedLock implements IDistributedLock {
  readonly name: string;
  readonly #acquire: AcquireFunction;
  readonly #admin: AdminFunctions;

  constructor(acquire: AcquireFunction, admin: AdminFunctions, name: string) {
    this.#acquire = acquire;
    this.#admin = admin;
    this.name = name;
  }

  inspect(): Promise<LockState> {
    return this.#admin.inspect('mutex', this.name, 1);
  }

  forceRelease(): Promise<number> {
    return this.#admin.forceRelease('mutex', this.name, 1);
  }

  resume(token: string): Promise<LockHandle> {
    return this.#admin.resume(['mutex'], this.name, 1, token);
  }

  acquire(options?: AcquireOptions): Promise<LockHandle> {
    // 'acquire' mode never resolves null
    return this.#acquire('mutex', this.name, 1, options, 'acquire') as Promise<LockHandle>;
  }

  tryAcquire(options?: AcquireOptions): Promise<LockHandle | null> {
    return this.#acquire('mutex', this.name, 1, options, 'try');
  }

  withLock<T>(fn: Body<T>, options?: AcquireOptions): Promise<T> {
    return runHeld(this.#acquire('mutex', this.name, 1, options, 'acquire'), fn);
  }
}

/** Core's read-write lock (writer preference is each backend's job, checked by the suite). */
export class ReadWriteLock implements IReadWriteLock {
  readonly name: string;
  readonly #acquire: AcquireFunction;
  readonly #admin: AdminFunctions;

  constructor(acquire: AcquireFunction, admin: AdminFunctions, name: string) {
    this.#acquire = acquire;
    this.#admin = admin;
    this.name = name;
  }

  inspect(): Promise<LockState> {
    return this.#admin.inspect('write', this.name, 1);
  }

  forceRelease(): Promise<number> {
    return this.#admin.forceRelease('write', this.name, 1);
  }

  /** A read hold resumes as a reader, a write hold as the writer. */
  resume(token: string): Promise<LockHandle> {
    return this.#admin.resume(['read', 'write'], this.name, 1, token);
  }

  acquireRead(options?: AcquireOptions): Promise<LockHandle> {
    return this.#read(options, 'acquire') as Promise<LockHandle>;
  }

  tryAcquireRead(options?: AcquireOptions): Promise<LockHandle | null> {
    return this.#read(options, 'try');
  }

  withReadLock<T>(fn: Body<T>, options?: AcquireOptions): Promise<T> {
    return runHeld(this.#read(options, 'acquire'), fn);
  }

  acquireWrite(options?: AcquireOptions): Promise<LockHandle> {
    return this.#write(options, 'acquire') as Promise<LockHandle>;
  }

  tryAcquireWrite(options?: AcquireOptions): Promise<LockHandle | null> {
    return this.#write(options, 'try');
  }

  withWriteLock<T>(fn: Body<T>, options?: AcquireOptions): Promise<T> {
    return runHeld(this.#write(options, 'acquire'), fn);
  }

  #read(options: AcquireOptions | undefined, mode: 'acquire' | 'try'): Promise<LockHandle | null> {
    return this.#acquire('read', this.name, Number.POSITIVE_INFINITY, options, mode);
  }

  #write(options: AcquireOptions | undefined, mode: 'acquire' | 'try'): Promise<LockHandle | null> {
    return this.#acquire('write', this.name, 1, options, mode);
  }
}

/** Core's semaphore: at most `maxCount` permits per name. */
export class Semaphore implements ISemaphore {
  readonly name: string;
  readonly maxCount: number;
  readonly #acquire: AcquireFunction;
  readonly #admin: AdminFunctions;

  constructor(acquire: AcquireFunction, admin: AdminFunctions, name: string, maxCount: number) {
    this.#acquire = acquire;
    this.#admin = admin;
    this.name = name;
    this.maxCount = maxCount;
  }

  inspect(): Promise<LockState> {
    return this.#admin.inspect('semaphore', this.name, this.maxCount);
  }

  forceRelease(): Promise<number> {
    return this.#admin.forceRelease('semaphore', this.name, this.maxCount);
  }

  resume(token: string): Promise<LockHandle> {
    return this.#admin.resume(['semaphore'], this.name, this.maxCount, token);
  }

  acquire(options?: SemaphoreAcquireOptions): Promise<LockHandle> {
    return this.#permit(options, 'acquire') as Promise<LockHandle>;
  }

  tryAcquire(options?: SemaphoreAcquireOptions): Promise<LockHandle | null> {
    return this.#permit(options, 'try');
  }

  withPermit<T>(fn: Body<T>, options?: SemaphoreAcquireOptions): Promise<T> {
    return runHeld(this.#permit(options, 'acquire'), fn);
  }

  #permit(
    options: SemaphoreAcquireOptions | undefined,
    mode: 'acquire' | 'try',
  ): Promise<LockHandle | null> {
    return this.#acquire('semaphore', this.name, this.maxCount, options, mode);
  }
}
