import { backendLabels } from '../backends/backend-ids.js';
import { markdownTable } from '../bench/bench-table.js';
import { quantile } from '../support/statistics.js';
import type { BackendChaosResult, FaultOutcome } from './chaos-result.js';
import { sharedSummaryTable } from './shared-summary.js';

const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)}` : '—');

function lostSummary(outcomes: readonly FaultOutcome[]): string {
  const latencies = outcomes.flatMap((outcome) => outcome.lostAfterStartMs);
  const hit = outcomes.reduce((sum, outcome) => sum + outcome.holdersHit, 0);
  if (latencies.length === 0) return `0 / ${hit}`;
  return `${latencies.length} / ${hit}, p50 ${ms(quantile(latencies, 0.5))} ms, max ${ms(Math.max(...latencies))} ms`;
}

function slowestRecovery(outcomes: readonly FaultOutcome[]): string {
  let worst: { ms: number; bound: number } | undefined;
  for (const outcome of outcomes) {
    for (const recovery of outcome.recoveries) {
      const value = recovery.ms ?? Number.POSITIVE_INFINITY;
      if (!worst || value > worst.ms) worst = { ms: value, bound: outcome.fault.recoveryBoundMs };
    }
  }
  return worst ? `${ms(worst.ms)} ms (bound ${worst.bound})` : '—';
}

/** One row per backend. */
export function chaosSummaryTable(results: readonly BackendChaosResult[]): string {
  const header = [
    'backend',
    'run',
    'faults',
    'critical sections',
    'fenced writes accepted / rejected',
    'overlaps inside the detection window (max lag)',
    'lost signals after faults (of holders hit)',
    'slowest re-grant after a fault',
    'violations',
  ];
  const rows = results.map((result) => [
    backendLabels[result.backend],
    `${(result.durationMs / 1000).toFixed(0)} s`,
    String(result.faults.length),
    result.grants.toLocaleString('en-US'),
    `${result.writesAccepted.toLocaleString('en-US')} / ${result.writesRejected.toLocaleString('en-US')}`,
    result.tolerated.count === 0
      ? '0'
      : `${result.tolerated.count} holder(s), ${result.tolerated.pairs} grant(s) (${ms(result.tolerated.maxLagMs)} ms)`,
    lostSummary(result.faults),
    slowestRecovery(result.faults),
    result.violations.length === 0 ? '**0**' : `**${result.violations.length}** ✗`,
  ]);
  return markdownTable(header, rows, new Set([1, 2, 3, 4]));
}

/** One row per backend of the election scenario. */
export function electionSummaryTable(results: readonly BackendChaosResult[]): string {
  const header = [
    'backend',
    'run',
    'faults',
    'terms',
    'leader writes accepted / refused',
    'overlapping terms: inside the detection window / beyond (violations)',
    'stale-epoch writes accepted / refused',
    'slowest re-election after a fault',
    'violations',
  ];
  const rows = results.map((result) => [
    backendLabels[result.backend],
    `${(result.durationMs / 1000).toFixed(0)} s`,
    String(result.faults.length),
    result.grants.toLocaleString('en-US'),
    `${result.writesAccepted.toLocaleString('en-US')} / ${result.writesRejected.toLocaleString('en-US')}`,
    `${result.tolerated.count} / ${result.overlapViolations}`,
    `**${result.staleWrites.accepted}** / ${result.staleWrites.refused}`,
    slowestRecovery(result.faults),
    result.violations.length === 0 ? '**0**' : `**${result.violations.length}** ✗`,
  ]);
  return markdownTable(header, rows, new Set([1, 2, 3, 4]));
}

/** One row per injected fault of a backend. */
export function faultTable(result: BackendChaosResult): string {
  const header = [
    'fault',
    'what was done',
    'holders hit',
    'lost signal, ms after fault',
    'locks granted again, ms after it cleared',
    'bound',
  ];
  const rows = result.faults.map((outcome) => {
    const { fault } = outcome;
    const lost =
      outcome.lostAfterStartMs.length === 0
        ? '—'
        : `${outcome.lostAfterStartMs.map(ms).join(', ')}${
            outcome.lostAfterResumeMs.length > 0
              ? ` (after SIGCONT: ${outcome.lostAfterResumeMs.map(ms).join(', ')})`
              : ''
          }`;
    const recovered = outcome.recoveries
      .map((recovery) => (recovery.ms === undefined ? 'never' : ms(recovery.ms)))
      .join(', ');
    return [
      fault.kind,
      fault.description,
      outcome.holdersHit === 0
        ? '0'
        : `${outcome.holdersHit} (release → false ${outcome.releasedFalse}, → true ${outcome.releasedTrue})`,
      lost,
      recovered,
      `${fault.recoveryBoundMs}`,
    ];
  });
  return markdownTable(header, rows);
}

const scenarioTitles = {
  mutex: '',
  election: ' — leader election',
  rwlock: ' — read-write locks',
  semaphore: ' — semaphores',
} as const;

/** The whole report: summary table, then per backend its faults and its findings. */
export function chaosReport(results: readonly BackendChaosResult[]): string {
  const mutexes = results.filter((result) => result.scenario === 'mutex');
  const elections = results.filter((result) => result.scenario === 'election');
  const sections: string[] = [];
  if (mutexes.length > 0) sections.push(chaosSummaryTable(mutexes));
  for (const [scenario, title] of [
    ['rwlock', 'Read-write locks'],
    ['semaphore', 'Semaphores'],
  ] as const) {
    const shared = results.filter((result) => result.scenario === scenario);
    if (shared.length === 0) continue;
    if (sections.length > 0) sections.push('');
    sections.push(`${title}:`, '', sharedSummaryTable(shared));
  }
  if (elections.length > 0) {
    if (sections.length > 0) sections.push('');
    sections.push('Leader election:', '', electionSummaryTable(elections));
  }
  for (const result of results) {
    const scenario = scenarioTitles[result.scenario];
    const lines = [
      '',
      `### ${backendLabels[result.backend]}${scenario}${result.maxCount === undefined ? '' : ` (maxCount ${result.maxCount})`} — declared lostDetectionMs ${result.bounds.lostDetectionMs}, abandonedReleaseMs ${result.bounds.abandonedReleaseMs}; ${result.workersStarted} worker processes`,
      '',
      faultTable(result),
    ];
    const errors = Object.entries(result.acquireErrors);
    if (errors.length > 0) {
      lines.push(
        '',
        `acquire errors (workers retry): ${errors.map(([code, count]) => `${code} × ${count}`).join(', ')}`,
      );
    }
    if (result.tolerated.count > 0) {
      lines.push(
        '',
        `${result.tolerated.count} holder(s) went on believing they held a lock after it had passed to another holder, inside the declared detection window (${result.tolerated.pairs} overlapping grants in all); their fenced writes meanwhile: ${result.tolerated.writesAccepted} accepted, ${result.tolerated.writesRejected} rejected. The longest per holder:`,
        ...result.tolerated.examples.map((example) => `- ${example}`),
      );
    }
    if (result.skipped.length > 0) lines.push('', `skipped: ${result.skipped.join(', ')}`);
    if (result.violations.length > 0) {
      lines.push('', `**VIOLATIONS (${result.violations.length}):**`);
      const shown = new Map<string, number>();
      for (const violation of result.violations) {
        const count = (shown.get(violation.kind) ?? 0) + 1;
        shown.set(violation.kind, count);
        if (count <= 10) lines.push(`- ${violation.kind}: ${violation.detail}`);
      }
      for (const [kind, count] of shown) {
        if (count > 10) lines.push(`- … and ${count - 10} more ${kind}`);
      }
    }
    sections.push(lines.join('\n'));
  }
  return sections.join('\n');
}
