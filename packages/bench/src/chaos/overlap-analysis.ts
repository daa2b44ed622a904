import { believedUntil, type GrantRecord } from './chaos-ledger.js';
import type { FaultWindow } from './fault-kinds.js';
import { conflicts, exclusive, type Sharing } from './sharing.js';

/**
 * Two grants of one mutex (or two conflicting grants of an RW lock: a writer and anyone;
 * or, on a semaphore, the oldest and the newest of more than `maxCount` grants) whose holders both believed they held it (acquire had returned,
 * `handle.signal` was not aborted, release not yet called, process alive) at the same time.
 */
export interface Overlap {
  /**
   * The grant with the lower token (on a tie, the earlier one): the server granted it first,
   * so its hold was the one broken.
   */
  readonly stale: GrantRecord;
  /** The grant with the higher token. */
  readonly current: GrantRecord;
  /**
   * How long the stale holder went on believing, counted from the later of the two grants
   * returning — or from its SIGCONT when it was SIGSTOPped meanwhile (frozen, it could
   * notice nothing).
   */
  readonly lagMs: number;
  readonly lagFrom: 'current-grant' | 'own-grant' | 'resume';
  /** The fault that broke the stale holder's hold, if any fits. */
  readonly explainedBy: FaultWindow | undefined;
  /** Explained by a fault and within the declared `lostDetectionMs`: the fence's job. */
  readonly tolerated: boolean;
  /** The stale holder's fenced writes stated after the current grant returned. */
  readonly staleWritesAccepted: number;
  readonly staleWritesRejected: number;
}

function hits(fault: FaultWindow, pid: number): boolean {
  return fault.pids === undefined || fault.pids.includes(pid);
}

/**
 * Every pair of conflicting grants of one lock (see sharing.ts) whose holders' beliefs
 * overlapped in time — on a semaphore, every grant that made more than `maxCount` holders
 * believe at once, paired with the lowest-token one of them; the
 * times are CLOCK_MONOTONIC statements of the holders themselves (acquire returned, signal
 * aborted, release called) and the orchestrator's SIGKILL times.
 *
 * An overlap is *tolerated* when a fault that hit the stale holder (a server fault, or a
 * fault on its own process) began before the current grant and ended not long before the
 * stale holder asked for the lock, and the stale holder stopped believing within the
 * backend's declared `lostDetectionMs`. That is the window the contract allows (the backend
 * may need that long to notice) and fencing tokens exist for. Anything else is a violation.
 */
export function findOverlaps(
  grants: Iterable<GrantRecord>,
  faults: readonly FaultWindow[],
  killedAt: ReadonlyMap<number, number>,
  lostDetectionMs: number,
  sharing: Sharing = exclusive,
): Overlap[] {
  const byLock = new Map<string, { grant: GrantRecord; until: number }[]>();
  for (const grant of grants) {
    if (Number.isNaN(grant.acquiredAt)) continue;
    const until = believedUntil(grant, killedAt);
    if (!(until > grant.acquiredAt)) continue;
    const list = byLock.get(grant.lock) ?? [];
    list.push({ grant, until });
    byLock.set(grant.lock, list);
  }
  const overlaps: Overlap[] = [];
  for (const list of byLock.values()) {
    list.sort((a, b) => a.grant.acquiredAt - b.grant.acquiredAt);
    if (sharing.capacity > 1) {
      overlaps.push(...crowds(list, sharing.capacity, faults, lostDetectionMs));
      continue;
    }
    for (const [index, first] of list.entries()) {
      for (let next = index + 1; next < list.length; next++) {
        const second = list[next]!;
        if (second.grant.acquiredAt >= first.until) break;
        if (!conflicts(first.grant.kind, second.grant.kind)) continue;
        // The lower token was granted first; on a tie (a duplicate token, reported by the
        // token checks) the earlier grant.
        const [stale, current] =
          second.grant.token < first.grant.token ? [second, first] : [first, second];
        overlaps.push(classify(stale.grant, stale.until, current.grant, faults, lostDetectionMs));
      }
    }
  }
  return overlaps;
}

/**
 * Semaphore: each grant that returned while `capacity` or more others were believed held
 * makes a crowd; the lowest-token member (granted first, so the one whose permit was broken)
 * is paired with the newest one (or, if the newest has the lowest token, the highest).
 */
function crowds(
  list: readonly { grant: GrantRecord; until: number }[],
  capacity: number,
  faults: readonly FaultWindow[],
  lostDetectionMs: number,
): Overlap[] {
  const overlaps: Overlap[] = [];
  let active: { grant: GrantRecord; until: number }[] = [];
  for (const entry of list) {
    active = active.filter((other) => other.until > entry.grant.acquiredAt);
    active.push(entry);
    if (active.length <= capacity) continue;
    const byToken = [...active].sort((a, b) =>
      a.grant.token < b.grant.token ? -1 : a.grant.token > b.grant.token ? 1 : 0,
    );
    const stale = byToken[0]!;
    const current = stale === entry ? byToken.at(-1)! : entry;
    overlaps.push(classify(stale.grant, stale.until, current.grant, faults, lostDetectionMs));
  }
  return overlaps;
}

function classify(
  stale: GrantRecord,
  staleUntil: number,
  current: GrantRecord,
  faults: readonly FaultWindow[],
  lostDetectionMs: number,
): Overlap {
  const later = Math.max(current.acquiredAt, stale.acquiredAt);
  const laterFrom = current.acquiredAt >= stale.acquiredAt ? 'current-grant' : 'own-grant';
  let explainedBy: FaultWindow | undefined;
  let lagMs = staleUntil - later;
  let lagFrom: Overlap['lagFrom'] = laterFrom;
  const asked = Number.isNaN(stale.requestedAt) ? stale.acquiredAt : stale.requestedAt;
  for (const fault of faults) {
    if (!hits(fault, stale.pid)) continue;
    if (fault.startedAt > current.acquiredAt) continue;
    if (fault.clearedAt + lostDetectionMs < asked) continue;
    const resumed = fault.kind === 'stop-holder' && fault.clearedAt > later;
    const lag = staleUntil - (resumed ? fault.clearedAt : later);
    // The closest explanation; on a tie the most recent fault.
    if (
      explainedBy === undefined ||
      lag < lagMs ||
      (lag === lagMs && fault.startedAt > explainedBy.startedAt)
    ) {
      explainedBy = fault;
      lagMs = lag;
      lagFrom = resumed ? 'resume' : laterFrom;
    }
  }
  const after = stale.writes.filter((write) => write.at >= current.acquiredAt);
  return {
    stale,
    current,
    lagMs,
    lagFrom,
    explainedBy,
    tolerated: explainedBy !== undefined && lagMs <= lostDetectionMs,
    staleWritesAccepted: after.filter((write) => write.accepted).length,
    staleWritesRejected: after.filter((write) => !write.accepted).length,
  };
}
