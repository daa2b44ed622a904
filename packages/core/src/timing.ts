/** Monotonic milliseconds (the clock of every deadline and lease in lockkit). */
export function now(): number {
  return performance.now();
}

/**
 * Resolves after `ms`, or rejects with `signal.reason` as soon as `signal` aborts. The timer
 * is always cleared, so it never leaks; it is unref'd (never keeps a process alive) unless
 * `keepAlive` is set — a caller awaiting a lock is work in progress, so its waits keep the
 * process alive, while background timers do not.
 */
export function delay(ms: number, signal?: AbortSignal, keepAlive = false): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (!keepAlive) timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A deadline registered with {@link DeadlineTimer}. */
export interface Deadline {
  readonly at: number;
  readonly fire: () => void;
}

/** A deadline in a timer's list. */
class Entry implements Deadline {
  readonly at: number;
  readonly fire: () => void;
  prev: Entry | undefined;
  next: Entry | undefined;
  /** Pending (in the list), due (taken out by a sweep, about to fire), or done. */
  state: 'pending' | 'due' | 'done' = 'pending';

  constructor(at: number, fire: () => void) {
    this.at = at;
    this.fire = fire;
  }
}

/**
 * Many deadlines on one timer: it is armed for the earliest, and each deadline that passes is
 * fired once. Adding a later deadline than the armed one, or deleting one, touches no timer, so
 * a stream of short operations with deadlines (acquires with a timeout, commands with a reply
 * deadline) costs a list entry each instead of a timer armed and cleared each. The entries
 * form a linked list, so adding and deleting allocate nothing else and hash nothing. With
 * `keepAlive` (the default) the timer keeps the process alive while deadlines are pending;
 * without, never (for work that something else, such as a socket, already keeps alive).
 */
export class DeadlineTimer {
  #head: Entry | undefined;
  #tail: Entry | undefined;
  #size = 0;
  readonly #keepAlive: boolean;
  readonly #resolutionMs: number;
  #timer: NodeJS.Timeout | undefined;
  #armedAt = Number.POSITIVE_INFINITY;
  #lastSweep = Number.NEGATIVE_INFINITY;

  /**
   * `resolutionMs` (default 0): a sweep runs at least this long after the previous one, so a
   * deadline may fire up to that late — for many long-lived deadlines that mostly fire (lease
   * extensions), where a sweep per millisecond over all of them would cost more than timers.
   */
  constructor(options: { readonly keepAlive?: boolean; readonly resolutionMs?: number } = {}) {
    this.#keepAlive = options.keepAlive ?? true;
    this.#resolutionMs = options.resolutionMs ?? 0;
  }

  /** Calls `fire` once `at` (performance.now() ms) has passed, unless deleted first. */
  add(at: number, fire: () => void): Deadline {
    const entry = new Entry(at, fire);
    const tail = this.#tail;
    entry.prev = tail;
    if (tail) tail.next = entry;
    else this.#head = entry;
    this.#tail = entry;
    this.#size += 1;
    if (this.#keepAlive && this.#size === 1) this.#timer?.ref();
    if (at < this.#armedAt) this.#arm(at);
    return entry;
  }

  delete(deadline: Deadline): void {
    const entry = deadline as Entry;
    if (entry.state === 'due') entry.state = 'done'; // taken out by a sweep: do not fire it
    if (entry.state !== 'pending') return;
    this.#unlink(entry);
    entry.state = 'done';
    if (this.#keepAlive && this.#size === 0) this.#timer?.unref();
  }

  /** Clears the timer if no deadline is pending (so a closing owner leaves nothing armed). */
  stopIfIdle(): void {
    if (this.#size > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
  }

  #unlink(entry: Entry): void {
    const { prev, next } = entry;
    if (prev) prev.next = next;
    else this.#head = next;
    if (next) next.prev = prev;
    else this.#tail = prev;
    entry.prev = undefined;
    entry.next = undefined;
    this.#size -= 1;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedAt = at;
    const earliest = Math.max(at, this.#lastSweep + this.#resolutionMs);
    this.#timer = setTimeout(() => this.#sweep(), Math.max(0, Math.ceil(earliest - now())));
    if (!this.#keepAlive || this.#size === 0) this.#timer.unref();
  }

  #sweep(): void {
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    const at = now();
    this.#lastSweep = at;
    const due: Entry[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (let entry = this.#head; entry; ) {
      const following = entry.next;
      if (entry.at <= at) {
        this.#unlink(entry);
        entry.state = 'due';
        due.push(entry);
      } else if (entry.at < next) {
        next = entry.at;
      }
      entry = following;
    }
    // Armed before firing, so deadlines added by the callbacks compare against it.
    if (next < Number.POSITIVE_INFINITY) this.#arm(next);
    if (due.length > 1) due.sort((a, b) => a.at - b.at); // a late sweep still fires in order
    for (const entry of due) {
      if (entry.state !== 'due') continue; // deleted by an earlier callback of this sweep
      entry.state = 'done';
      entry.fire();
    }
  }
}

/** `ms` ± `fraction`, so pollers that started together drift apart. */
export function jitter(ms: number, fraction = 0.2): number {
  return ms * (1 - fraction + Math.random() * 2 * fraction);
}

/**
 * `work`'s value, or `undefined` as soon as `signal` aborts. The work goes on; its outcome
 * (even a rejection) is then ignored, so the caller must undo a late success itself.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * `promise`, or a rejection once `timeoutMs` passed first (a server that accepted the
 * connection but does not answer); a value that comes later is handed to `late`.
 */
export function settleWithin<T>(
  promise: Promise<T>,
  timeoutMs: number,
  late: (value: T) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) late(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * A latched wake-up: `notify()` before `next()` is not lost. Backends use it to implement
 * {@link ReleaseWatch}: create one per watch, call `notify()` when a release message arrives.
 */
export class Wakeup {
  #pending = false;
  #waiter: (() => void) | undefined;
  #closed = false;
  readonly #onClose: (() => void) | undefined;

  constructor(onClose?: () => void) {
    this.#onClose = onClose;
  }

  notify(): void {
    if (this.#waiter) {
      const wake = this.#waiter;
      this.#waiter = undefined;
      wake();
    } else {
      this.#pending = true;
    }
  }

  next(signal: AbortSignal): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        this.#waiter = undefined;
        reject(signal.reason);
      };
      this.#waiter = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose?.();
  }
}

/**
 * How long a backend whose server enforces the wait's deadline itself (a lock timeout sent
 * with the waiting statement) lets the server end the wait before cancelling it, once the
 * wait stops at `deadline`: the server's timeout ends it at that moment, and a cancel request
 * costs the server more. 0 when the wait stopped earlier (abort, close): cancel at once.
 */
export function deadlineGraceMs(deadline: number): number {
  return now() >= deadline - 1 ? 50 : 0;
}
