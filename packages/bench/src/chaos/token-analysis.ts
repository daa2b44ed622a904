import { believedUntil, type FenceState, type GrantRecord } from './chaos-ledger.js';
import type { Violation } from './chaos-result.js';
import type { FaultKind, FaultWindow } from './fault-kinds.js';
import { conflicts, exclusive, type Sharing } from './sharing.js';

/** Where and when a grant happened, for a violation's text. */
export function describeGrant(grant: GrantRecord, origin: number): string {
  return `token ${grant.token} (worker ${grant.pid}, acquired at +${((grant.acquiredAt - origin) / 1000).toFixed(3)} s)`;
}

/** The faults of the 10 s before `at`, for the context of a violation. */
function recentFaults(faults: readonly FaultWindow[], at: number, origin: number): string {
  const recent = faults.filter((fault) => fault.startedAt <= at && at - fault.startedAt < 10_000);
  if (recent.length === 0) return 'no fault in the 10 s before';
  return `faults in the 10 s before: ${recent
    .map(
      (fault) => `"${fault.description}" at +${((fault.startedAt - origin) / 1000).toFixed(3)} s`,
    )
    .join(', ')}`;
}

/**
 * How much older than its return a grant can be when the process that asked for it was not
 * frozen: a reply in flight, an event loop that was busy. (A Redis grant is refused anyway
 * when its reply comes later than the lease; a server-side wait's reply is read at once.)
 */
export const grantAgeMs = 1000;

/** When a grant was certainly over: its exit statement, its lost signal, or its worker's death. */
function endOf(grant: GrantRecord, killedAt: ReadonlyMap<number, number>): number | undefined {
  const ends = [grant.exitAt, grant.lostAt, killedAt.get(grant.pid)].filter(
    (value): value is number => value !== undefined,
  );
  return ends.length === 0 ? undefined : Math.min(...ends);
}

/**
 * Faults that can hold a grant's reply back, so that it returns late with its (older, lower)
 * token: a frozen process reads it late, a partitioned, lossy or delayed link delivers it late.
 */
const lateReplies: readonly FaultKind[] = [
  'stop-holder',
  'partition-holder',
  'partition-minority',
  'partition-majority',
  'lossy-holder',
  'delay-server',
];

/**
 * Fencing-token checks per lock: no token handed out twice; a grant has a larger token than
 * every grant that was over (released, lost, its process killed) before it was requested,
 * and than every grant that returned more than {@link grantAgeMs} before it did (unless its
 * process was frozen meanwhile) — strictly increasing across releases, expiries, kills and
 * restarts; and the fence's own audit (it never accepted a token below one it had accepted).
 */
export function tokenViolations(
  grants: Iterable<GrantRecord>,
  fences: ReadonlyMap<string, FenceState>,
  killedAt: ReadonlyMap<number, number>,
  origin: number,
  faults: readonly FaultWindow[] = [],
): Violation[] {
  const violations: Violation[] = [];
  const byLock = new Map<string, GrantRecord[]>();
  for (const grant of grants) {
    if (Number.isNaN(grant.acquiredAt)) continue;
    const list = byLock.get(grant.lock) ?? [];
    list.push(grant);
    byLock.set(grant.lock, list);
  }
  for (const [lock, list] of byLock) {
    const seen = new Map<bigint, GrantRecord>();
    for (const grant of list) {
      const other = seen.get(grant.token);
      if (other) {
        violations.push({
          kind: 'duplicate-token',
          detail: `${lock}: ${describeGrant(other, origin)} and ${describeGrant(grant, origin)} share a token; ${recentFaults(faults, Math.max(other.acquiredAt, grant.acquiredAt), origin)}`,
        });
      }
      seen.set(grant.token, grant);
    }
    // Sweep: grants by when they were requested; a pointer over grants by end time.
    const requested = [...list].sort((a, b) => a.requestedAt - b.requestedAt);
    const ended = list
      .map((grant) => ({ grant, end: endOf(grant, killedAt) }))
      .filter((entry): entry is { grant: GrantRecord; end: number } => entry.end !== undefined)
      .sort((a, b) => a.end - b.end);
    let pointer = 0;
    let highest: GrantRecord | undefined;
    const flagged = new Set<GrantRecord>();
    for (const grant of requested) {
      while (pointer < ended.length && ended[pointer]!.end < grant.requestedAt) {
        const candidate = ended[pointer]!.grant;
        if (!highest || candidate.token > highest.token) highest = candidate;
        pointer += 1;
      }
      if (highest && grant.token <= highest.token && highest !== grant) {
        flagged.add(grant);
        violations.push({
          kind: 'token-order',
          detail: `${lock}: ${describeGrant(grant, origin)} is not above ${describeGrant(highest, origin)}, which was over before acquire() was even called (at +${((grant.requestedAt - origin) / 1000).toFixed(3)} s); ${recentFaults(faults, grant.acquiredAt, origin)}`,
        });
      }
    }
    // Second sweep: by when acquire() returned. A grant that returned more than
    // `grantAgeMs` after another one, to a process that was not frozen (nor cut off, nor on a
    // lossy or delayed link) meanwhile, was issued after it (a reply is not that old
    // otherwise), so its token is larger.
    const returned = [...list].sort((a, b) => a.acquiredAt - b.acquiredAt);
    let behind = 0;
    let earlier: GrantRecord | undefined;
    for (const grant of returned) {
      while (
        behind < returned.length &&
        returned[behind]!.acquiredAt < grant.acquiredAt - grantAgeMs
      ) {
        const candidate = returned[behind]!;
        if (!earlier || candidate.token > earlier.token) earlier = candidate;
        behind += 1;
      }
      if (!earlier || grant.token >= earlier.token || flagged.has(grant)) continue;
      const since = earlier.acquiredAt;
      const frozen = faults.some(
        (fault) =>
          lateReplies.includes(fault.kind) &&
          (fault.pids === undefined || fault.pids.includes(grant.pid)) &&
          fault.startedAt < grant.acquiredAt &&
          fault.clearedAt > since,
      );
      if (frozen) continue;
      violations.push({
        kind: 'token-order',
        detail: `${lock}: ${describeGrant(grant, origin)} is below ${describeGrant(earlier, origin)}, which was granted ${Math.round(grant.acquiredAt - earlier.acquiredAt)} ms earlier (the later holder was not frozen, so its grant is the later one); ${recentFaults(faults, grant.acquiredAt, origin)}`,
      });
    }
  }
  for (const [lock, fence] of fences) {
    let max: bigint | undefined;
    for (const token of fence.acceptedTokens) {
      if (max !== undefined && token < max) {
        violations.push({
          kind: 'stale-accepted',
          detail: `${lock}: the fence accepted token ${token} after it had accepted ${max}`,
        });
      }
      if (max === undefined || token > max) max = token;
    }
  }
  return violations;
}

/**
 * `release()` must resolve true only if the lock was ours up to the release: a grant whose
 * release said true although a later conflicting grant with a higher token had returned
 * before its release call is a violation (a semaphore: `capacity` of them, still held at
 * that call, not counting those whose own release resolved false: they admit their permit
 * was taken, so they did not keep one beside ours); so is a release that threw.
 */
export function releaseViolations(
  grants: Iterable<GrantRecord>,
  origin: number,
  sharing: Sharing = exclusive,
  killedAt: ReadonlyMap<number, number> = new Map(),
): Violation[] {
  const violations: Violation[] = [];
  const byLock = new Map<string, GrantRecord[]>();
  for (const grant of grants) {
    if (grant.releaseResult === 'threw') {
      violations.push({
        kind: 'release-threw',
        detail: `${grant.lock}: release() of ${describeGrant(grant, origin)} threw: ${grant.releaseError ?? '?'}`,
      });
    }
    if (Number.isNaN(grant.acquiredAt)) continue;
    const list = byLock.get(grant.lock) ?? [];
    list.push(grant);
    byLock.set(grant.lock, list);
  }
  for (const [lock, list] of byLock) {
    list.sort((a, b) => a.acquiredAt - b.acquiredAt);
    for (const [index, grant] of list.entries()) {
      const exitAt = grant.exitAt;
      if (grant.releaseResult !== true || exitAt === undefined) continue;
      // Grants that returned after this one, before its release call, with a higher token
      // (so the server granted them later: it had given this hold up). Lower-token grants
      // are the token checks' business.
      const later: GrantRecord[] = [];
      for (let next = index + 1; next < list.length; next++) {
        const other = list[next]!;
        if (other.acquiredAt >= exitAt) break;
        if (other.token <= grant.token || !conflicts(grant.kind, other.kind)) continue;
        if (sharing.capacity > 1) {
          if (believedUntil(other, killedAt) <= exitAt) continue;
          if (other.releaseResult === false) continue; // displaced: it held no permit
        }
        later.push(other);
      }
      if (later.length < sharing.capacity) continue;
      const first = later[0]!;
      violations.push({
        kind: 'release-lied',
        detail: `${lock}: release() of ${describeGrant(grant, origin)} resolved true, but ${describeGrant(first, origin)}${later.length > 1 ? ` and ${later.length - 1} more` : ''} had been granted ${(exitAt - first.acquiredAt).toFixed(1)} ms before that release`,
      });
    }
  }
  return violations;
}
