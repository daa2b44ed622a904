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

  constructor(acquire: AcquireFunction, name: string) {
    this.#acquire = acquire;
    this.name = name;
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

  constructor(acquire: AcquireFunction, name: string) {
    this.#acquire = acquire;
    this.name = name;
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

  constructor(acquire: AcquireFunction, name: string, maxCount: number) {
    this.#acquire = acquire;
    this.name = name;
    this.maxCount = maxCount;
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
