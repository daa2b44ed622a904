import type { LockKind } from '@lockkit/core';
import type { BackendId } from '../backends/backend-ids.js';
import type { ChaosLedger, GrantRecord } from './chaos-ledger.js';
import type { ChaosScenario, DeclaredBounds } from './chaos-messages.js';
import type { BackendChaosResult, ToleratedOverlaps, Violation } from './chaos-result.js';
import type { FaultWindow } from './fault-kinds.js';
import { findOverlaps, type Overlap } from './overlap-analysis.js';
import { faultOutcome, stuckViolations } from './recovery-analysis.js';
import { staleWrites } from './stale-write-analysis.js';
import { describeGrant, releaseViolations, tokenViolations } from './token-analysis.js';
import { writerPreference } from './writer-preference-analysis.js';

/** The facts of one backend's run, for {@link analyseRun}. */
export interface RunFacts {
  readonly backend: BackendId;
  readonly scenario: ChaosScenario;
  readonly ledger: ChaosLedger;
  readonly faults: readonly FaultWindow[];
  readonly bounds: DeclaredBounds;
  readonly locks: readonly string[];
  readonly startedAt: number;
  readonly endedAt: number;
  readonly workersStarted: number;
  readonly skipped: readonly string[];
}

function describeOverlap(overlap: Overlap, origin: number): string {
  const { stale, current, explainedBy } = overlap;
  const cause = explainedBy
    ? `after "${explainedBy.description}"`
    : 'with no fault on that holder or its server to explain it';
  const from =
    overlap.lagFrom === 'resume'
      ? `its SIGCONT (${describeGrant(current, origin)} had been granted while it was frozen)`
      : overlap.lagFrom === 'own-grant'
        ? `acquire() returned to it (${describeGrant(current, origin)}, granted later by the server, already held the lock by then)`
        : `${describeGrant(current, origin)} was granted`;
  return `${stale.lock}: ${describeGrant(stale, origin)} went on believing it held the lock (signal not aborted, release not called) ${overlap.lagMs.toFixed(1)} ms after ${from}, ${cause}; its fenced writes meanwhile: ${overlap.staleWritesAccepted} accepted, ${overlap.staleWritesRejected} rejected`;
}

/** Tolerated overlaps per stale grant: its worst lag, its writes after the takeover. */
function summariseTolerated(tolerated: readonly Overlap[], origin: number): ToleratedOverlaps {
  const worst = new Map<GrantRecord, Overlap>();
  for (const overlap of tolerated) {
    const seen = worst.get(overlap.stale);
    if (!seen || overlap.lagMs > seen.lagMs) worst.set(overlap.stale, overlap);
  }
  // The stale holder's writes after the FIRST current grant (the one with the most of them).
  const first = new Map<GrantRecord, Overlap>();
  for (const overlap of tolerated) {
    const seen = first.get(overlap.stale);
    if (!seen || overlap.current.acquiredAt < seen.current.acquiredAt) {
      first.set(overlap.stale, overlap);
    }
  }
  const zombies = [...first.values()];
  return {
    count: worst.size,
    pairs: tolerated.length,
    maxLagMs: Math.max(0, ...[...worst.values()].map((overlap) => overlap.lagMs)),
    writesAccepted: zombies.reduce((sum, overlap) => sum + overlap.staleWritesAccepted, 0),
    writesRejected: zombies.reduce((sum, overlap) => sum + overlap.staleWritesRejected, 0),
    examples: [...worst.values()].slice(0, 5).map((overlap) => describeOverlap(overlap, origin)),
  };
}

function countKinds(grants: readonly GrantRecord[]): Partial<Record<LockKind, number>> {
  const counts: Partial<Record<LockKind, number>> = {};
  for (const grant of grants) counts[grant.kind] = (counts[grant.kind] ?? 0) + 1;
  return counts;
}

/** Turns the ledger and the fault log into the backend's result and its violations. */
export function analyseRun(facts: RunFacts): BackendChaosResult {
  const { ledger, bounds, startedAt: origin } = facts;
  const grants = [...ledger.grants.values()];
  const { sharing } = ledger;
  const entered = grants.filter((grant) => !Number.isNaN(grant.acquiredAt));
  const overlaps = findOverlaps(
    grants,
    facts.faults,
    ledger.killedAt,
    bounds.lostDetectionMs,
    sharing,
  );
  const tolerated = overlaps.filter((overlap) => overlap.tolerated);
  const violations: Violation[] = overlaps
    .filter((overlap) => !overlap.tolerated)
    .map((overlap) => ({
      kind: 'overlap' as const,
      detail: `${describeOverlap(overlap, origin)} (declared lostDetectionMs ${bounds.lostDetectionMs})`,
    }));
  violations.push(...tokenViolations(grants, ledger.fences, ledger.killedAt, origin, facts.faults));
  violations.push(...releaseViolations(grants, origin, sharing, ledger.killedAt));
  const stale = staleWrites(grants, origin, sharing);
  violations.push(...stale.violations);
  const preference =
    facts.scenario === 'rwlock' ? writerPreference(grants, facts.faults, origin) : undefined;
  violations.push(...(preference?.violations ?? []));
  const faults = facts.faults.map((fault) =>
    faultOutcome(fault, facts.locks, ledger, bounds.lostDetectionMs),
  );
  for (const outcome of faults) violations.push(...stuckViolations(outcome));
  for (const failure of ledger.failures) {
    violations.push({
      kind: 'worker-failure',
      detail: `worker ${failure.pid} at +${((failure.at - origin) / 1000).toFixed(3)} s: ${failure.message}`,
    });
  }
  if (ledger.clockAnomalies > 0) {
    violations.push({
      kind: 'clock',
      detail: `${ledger.clockAnomalies} statements were stamped after the checker received them: the workers' clock is not the orchestrator's, so the overlap analysis cannot be trusted`,
    });
  }
  let writesAccepted = 0;
  let writesRejected = 0;
  for (const fence of ledger.fences.values()) {
    writesAccepted += fence.accepted;
    writesRejected += fence.rejected;
  }
  return {
    backend: facts.backend,
    scenario: facts.scenario,
    bounds,
    durationMs: facts.endedAt - facts.startedAt,
    workersStarted: facts.workersStarted,
    grants: entered.length,
    grantsByKind: countKinds(entered),
    writesAccepted,
    writesRejected,
    tolerated: summariseTolerated(tolerated, origin),
    overlapViolations: overlaps.length - tolerated.length,
    staleWrites: stale.counts,
    writerPreference: preference?.counts,
    maxCount: facts.scenario === 'semaphore' ? sharing.capacity : undefined,
    faults,
    acquireErrors: Object.fromEntries(ledger.acquireErrors),
    violations,
    skipped: facts.skipped,
  };
}
