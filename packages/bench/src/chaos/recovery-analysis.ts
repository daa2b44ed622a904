import type { ChaosLedger, GrantRecord } from './chaos-ledger.js';
import type { FaultOutcome, Violation } from './chaos-result.js';
import type { FaultWindow } from './fault-kinds.js';

/**
 * What one fault did: how soon each lock was granted again after it cleared, which holders
 * it hit, and how long their lost signal took.
 */
export function faultOutcome(
  fault: FaultWindow,
  locks: readonly string[],
  ledger: ChaosLedger,
  lostDetectionMs: number,
): FaultOutcome {
  const recoveries = locks.map((lock) => {
    const next = ledger.firstGrantAfter(lock, fault.clearedAt);
    return { lock, ms: next ? next.acquiredAt - fault.clearedAt : undefined };
  });
  const hit: GrantRecord[] = [];
  for (const grant of ledger.grants.values()) {
    if (!(grant.acquiredAt < fault.startedAt)) continue;
    if (fault.pids !== undefined && !fault.pids.includes(grant.pid)) continue;
    const ends = [grant.exitAt, grant.lostAt, ledger.killedAt.get(grant.pid)].filter(
      (value): value is number => value !== undefined,
    );
    if (ends.length > 0 && Math.min(...ends) < fault.startedAt) continue;
    hit.push(grant);
  }
  const horizon = fault.clearedAt + lostDetectionMs + 5000;
  const lost = hit.filter(
    (grant) =>
      grant.lostAt !== undefined && grant.lostAt >= fault.startedAt && grant.lostAt <= horizon,
  );
  const released = (result: boolean): number =>
    hit.filter((grant) => grant.releaseResult === result).length;
  return {
    fault,
    recoveries,
    holdersHit: hit.length,
    releasedTrue: released(true),
    releasedFalse: released(false),
    lostAfterStartMs: lost.map((grant) => (grant.lostAt ?? 0) - fault.startedAt),
    lostAfterResumeMs:
      fault.kind === 'stop-holder'
        ? lost.map((grant) => (grant.lostAt ?? 0) - fault.clearedAt)
        : [],
  };
}

/** A lock not granted again within the fault's bound after it cleared is stuck. */
export function stuckViolations(outcome: FaultOutcome): Violation[] {
  const { fault } = outcome;
  return outcome.recoveries
    .filter((recovery) => recovery.ms === undefined || recovery.ms > fault.recoveryBoundMs)
    .map((recovery) => ({
      kind: 'stuck' as const,
      detail: `${recovery.lock} after "${fault.description}": ${
        recovery.ms === undefined
          ? 'never granted again'
          : `granted again only ${Math.round(recovery.ms)} ms`
      } after the fault cleared (bound ${fault.recoveryBoundMs} ms)`,
    }));
}
