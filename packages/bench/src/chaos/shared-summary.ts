import { backendLabels } from '../backends/backend-ids.js';
import { markdownTable } from '../bench/bench-table.js';
import type { BackendChaosResult } from './chaos-result.js';

const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)}` : '—');

function slowestRecovery(result: BackendChaosResult): string {
  const values = result.faults.flatMap((outcome) =>
    outcome.recoveries.map((recovery) => recovery.ms ?? Number.POSITIVE_INFINITY),
  );
  return values.length === 0 ? '—' : `${ms(Math.max(...values))} ms`;
}

/**
 * One row per backend of the RW-lock scenario (`rwlock`) or the semaphore scenario: grants,
 * fenced writes, overlaps (an RW lock: a writer with anyone; a semaphore: more than
 * `maxCount` holders), writes of superseded holders, and (RW) writer preference.
 */
export function sharedSummaryTable(results: readonly BackendChaosResult[]): string {
  const rw = results[0]?.scenario === 'rwlock';
  const header = [
    'backend',
    'run',
    'faults',
    rw ? 'grants (reads / writes)' : 'permits granted',
    'fenced writes accepted / rejected',
    rw
      ? 'writer overlapping a holder: inside the detection window / beyond (violations)'
      : 'more than maxCount holders: inside the detection window / beyond (violations)',
    'superseded holders’ writes accepted / refused',
    ...(rw ? ['readers held back behind a waiting writer / let ahead (violations)'] : []),
    'slowest re-grant after a fault',
    'violations',
  ];
  const rows = results.map((result) => [
    backendLabels[result.backend],
    `${(result.durationMs / 1000).toFixed(0)} s`,
    String(result.faults.length),
    rw
      ? `${result.grants.toLocaleString('en-US')} (${result.grantsByKind.read ?? 0} / ${result.grantsByKind.write ?? 0})`
      : result.grants.toLocaleString('en-US'),
    `${result.writesAccepted.toLocaleString('en-US')} / ${result.writesRejected.toLocaleString('en-US')}`,
    `${result.tolerated.count} / ${result.overlapViolations}`,
    `**${result.staleWrites.accepted}** / ${result.staleWrites.refused}`,
    ...(rw
      ? [
          `${result.writerPreference?.readersHeldBack ?? 0} / **${result.writerPreference?.readersAhead ?? 0}**`,
        ]
      : []),
    slowestRecovery(result),
    result.violations.length === 0 ? '**0**' : `**${result.violations.length}** ✗`,
  ]);
  return markdownTable(header, rows, new Set([1, 2, 3, 4]));
}
