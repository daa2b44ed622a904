import type { LockKind } from '@lockkit/core';
import { monotonicMs } from '../support/monotonic-clock.js';
import { type FenceState, fenceAccepts, newFence } from './chaos-fence.js';
import type { WorkerReport } from './chaos-messages.js';
import { exclusive, type Sharing } from './sharing.js';

export type { FenceState } from './chaos-fence.js';

/** One fenced write (`enter` or `write`) as the checker saw it. */
export interface WriteRecord {
  readonly type: 'enter' | 'write';
  /** When the worker made it (its statement), and when the checker received it. */
  readonly at: number;
  readonly receivedAt: number;
  readonly aborted: boolean;
  readonly accepted: boolean;
  /** Order in which the checker received it, across every grant of the run. */
  readonly seq: number;
}

/** Everything known about one grant `(pid, grant)` of one lock. */
export interface GrantRecord {
  readonly pid: number;
  readonly lock: string;
  readonly grant: number;
  readonly token: bigint;
  /** What the handle holds: `mutex` (also an election's term), `read`, `write`, `semaphore`. */
  readonly kind: LockKind;
  /** When acquire() was called and when it returned (from `enter`); NaN until `enter` arrives. */
  requestedAt: number;
  acquiredAt: number;
  /** The latest statement made with `handle.signal` not aborted (undefined: none). */
  liveEnd: number | undefined;
  /** The earliest statement made with `handle.signal` aborted. */
  firstAbortedAt: number | undefined;
  /** The worker's "about to release" statement. */
  exitAt: number | undefined;
  lostAt: number | undefined;
  lostReason: string | undefined;
  releasedAt: number | undefined;
  releaseResult: boolean | 'threw' | 'resigned' | undefined;
  releaseError: string | undefined;
  readonly writes: WriteRecord[];
}

/**
 * Until when the holder believed it held the lock: its release call, its lost signal or
 * its death, whichever came first; without any of them, its last statement.
 */
export function believedUntil(grant: GrantRecord, killedAt: ReadonlyMap<number, number>): number {
  const ends = [grant.exitAt, grant.lostAt, killedAt.get(grant.pid)].filter(
    (value): value is number => value !== undefined,
  );
  return ends.length > 0 ? Math.min(...ends) : (grant.liveEnd ?? grant.acquiredAt);
}

/** A message the worker did not expect to need: a crash, an unhandled rejection. */
export interface WorkerFailure {
  readonly pid: number;
  readonly at: number;
  readonly message: string;
}

/**
 * The checker: a fenced resource per lock that accepts a write only with a token no newer
 * holder has superseded (see chaos-fence.ts), and the ledger of every statement the workers made. It lives in
 * the orchestrator process; workers' statements carry CLOCK_MONOTONIC times, which all
 * processes on the machine share, and the checker stamps each receipt on the same clock.
 */
export class ChaosLedger {
  readonly grants: Map<string, GrantRecord> = new Map();
  readonly fences: Map<string, FenceState> = new Map();
  readonly acquireErrors: Map<string, number> = new Map();
  readonly failures: WorkerFailure[] = [];
  readonly killedAt: Map<number, number> = new Map();
  /** Who may hold one name at once (the fence's rule for a semaphore). */
  readonly sharing: Sharing;
  /** Statements stamped later than their receipt (+5 ms): the shared clock is not shared. */
  clockAnomalies: number = 0;
  #writes = 0;
  /** Grants per lock in the order their `enter` arrived. */
  readonly #byLock = new Map<string, GrantRecord[]>();
  readonly #open = new Set<GrantRecord>();
  #enterWaiters: {
    accepts: (grant: GrantRecord) => boolean;
    resolve: (grant: GrantRecord) => void;
  }[] = [];

  constructor(sharing: Sharing = exclusive) {
    this.sharing = sharing;
  }

  /** Records a report; returns the fence's verdict for a write (to acknowledge), else undefined. */
  receive(
    pid: number,
    report: WorkerReport,
    receivedAt: number = monotonicMs(),
  ): boolean | undefined {
    switch (report.type) {
      case 'enter':
      case 'write': {
        this.#checkClock(report.at, receivedAt);
        const record = this.#grant(pid, report);
        if (report.type === 'enter') this.#entered(record, report.at, report.requestedAt);
        this.#statement(record, report.at, report.aborted);
        const accepted = this.#fence(report.lock, report.token, record.kind);
        this.#writes += 1;
        record.writes.push({
          type: report.type,
          at: report.at,
          receivedAt,
          aborted: report.aborted,
          accepted,
          seq: this.#writes,
        });
        return accepted;
      }
      case 'exit': {
        this.#checkClock(report.at, receivedAt);
        const record = this.#grant(pid, report);
        record.exitAt = report.at;
        this.#open.delete(record);
        this.#statement(record, report.at, report.aborted);
        return undefined;
      }
      case 'lost': {
        const record = this.#grant(pid, report);
        record.lostAt ??= report.at;
        record.lostReason ??= report.reason;
        this.#open.delete(record);
        return undefined;
      }
      case 'released': {
        const record = this.#grant(pid, report);
        record.releasedAt = report.at;
        record.releaseResult = report.result;
        record.releaseError = report.error;
        return undefined;
      }
      case 'acquire-error': {
        this.acquireErrors.set(report.code, (this.acquireErrors.get(report.code) ?? 0) + 1);
        return undefined;
      }
      case 'fatal': {
        this.failures.push({ pid, at: report.at, message: report.message });
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /**
   * Calls `onEnter` with the next grant whose `enter` arrives and that `accepts` approves —
   * synchronously, inside the receipt of that `enter`, before it is acknowledged: a fault
   * injected from there hits a worker that is certainly inside its critical section.
   * Resolves false if none came within `timeoutMs`.
   */
  atNextEnter(
    accepts: (grant: GrantRecord) => boolean,
    onEnter: (grant: GrantRecord) => void,
    timeoutMs: number,
  ): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter = {
        accepts,
        resolve: (grant: GrantRecord): void => {
          clearTimeout(timer);
          onEnter(grant);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.#enterWaiters = this.#enterWaiters.filter((entry) => entry !== waiter);
        resolve(false);
      }, timeoutMs);
      this.#enterWaiters.push(waiter);
    });
  }

  /** The orchestrator SIGKILLed `pid` at `at`: it stated nothing after. */
  markKilled(pid: number, at: number): void {
    this.killedAt.set(pid, at);
    for (const record of this.#open) if (record.pid === pid) this.#open.delete(record);
  }

  /** A worker died without being killed by the run. */
  markCrashed(pid: number, message: string): void {
    this.failures.push({ pid, at: monotonicMs(), message });
  }

  /** Grants of `lock` that entered and have not exited, lost, or died (right now). */
  openGrants(lock?: string): GrantRecord[] {
    return [...this.#open].filter((record) => lock === undefined || record.lock === lock);
  }

  /** The first grant of `lock` acquired after `after`, if any. */
  firstGrantAfter(lock: string, after: number): GrantRecord | undefined {
    // Enters arrive nearly in acquisition order: scan back from the newest.
    const list = this.#byLock.get(lock) ?? [];
    let first: GrantRecord | undefined;
    for (let index = list.length - 1; index >= 0; index--) {
      const record = list[index]!;
      if (record.acquiredAt > after) {
        if (!first || record.acquiredAt < first.acquiredAt) first = record;
      } else if (after - record.acquiredAt > 60_000) {
        break;
      }
    }
    return first;
  }

  #grant(
    pid: number,
    report: { lock: string; grant: number; token: bigint; kind?: LockKind },
  ): GrantRecord {
    const key = `${pid}:${report.grant}`;
    let record = this.grants.get(key);
    if (!record) {
      record = {
        pid,
        lock: report.lock,
        grant: report.grant,
        token: report.token,
        kind: report.kind ?? 'mutex',
        requestedAt: Number.NaN,
        acquiredAt: Number.NaN,
        liveEnd: undefined,
        firstAbortedAt: undefined,
        exitAt: undefined,
        lostAt: undefined,
        lostReason: undefined,
        releasedAt: undefined,
        releaseResult: undefined,
        releaseError: undefined,
        writes: [],
      };
      this.grants.set(key, record);
    }
    return record;
  }

  #entered(record: GrantRecord, at: number, requestedAt: number | undefined): void {
    record.acquiredAt = at;
    record.requestedAt = requestedAt ?? at;
    let list = this.#byLock.get(record.lock);
    if (!list) {
      list = [];
      this.#byLock.set(record.lock, list);
    }
    list.push(record);
    if (record.exitAt === undefined && record.lostAt === undefined) this.#open.add(record);
    const waiter = this.#enterWaiters.find((entry) => entry.accepts(record));
    if (waiter) {
      this.#enterWaiters = this.#enterWaiters.filter((entry) => entry !== waiter);
      waiter.resolve(record);
    }
  }

  #statement(record: GrantRecord, at: number, aborted: boolean): void {
    if (aborted) {
      record.firstAbortedAt = Math.min(record.firstAbortedAt ?? at, at);
    } else {
      record.liveEnd = Math.max(record.liveEnd ?? at, at);
    }
  }

  #fence(lock: string, token: bigint, kind: LockKind): boolean {
    let fence = this.fences.get(lock);
    if (!fence) {
      fence = newFence();
      this.fences.set(lock, fence);
    }
    return fenceAccepts(fence, token, kind, this.sharing.capacity);
  }

  #checkClock(at: number, receivedAt: number): void {
    if (at > receivedAt + 5) this.clockAnomalies += 1;
  }
}
