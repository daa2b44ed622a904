import { backendLabels } from '../backends/backend-ids.js';
import type { ContenderResult } from './bench-result.js';

/** A rounded count with thousands separators ('—' when not measured). */
export const integer = (value: number): string =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—';
/** Milliseconds: two decimals below 10 ('—' when not measured). */
export const milliseconds = (value: number): string =>
  !Number.isFinite(value) ? '—' : value < 10 ? value.toFixed(2) : value.toFixed(0);

/** A ratio as a whole percentage: 0.874 → `87 %`. */
export const percent = (value: number): string => `${Math.round(value * 100)} %`;

/** ` (min–max)` of several runs' values, shown with `show`; empty for a single run. */
export const spread = (values: readonly number[], show: (value: number) => string): string =>
  values.length > 1 ? ` (${show(Math.min(...values))}–${show(Math.max(...values))})` : '';

/** Column titles of the bench table. */
export const benchHeader: readonly string[] = [
  'backend',
  'library',
  'uncontended acquire+release/s',
  'handoff p50 ms',
  'handoff p99 ms',
  '8 workers: CS/s',
  '8 workers: CS per worker min–max',
  'held locks: server connections',
  'held locks: client heap/lock',
  'held locks: take all',
];

/** The bench table's rows, one per contender, in the order of `results`. */
export function benchRows(results: readonly ContenderResult[]): string[][] {
  return results.map((result) => {
    const { handoff, workers, held } = result;
    return [
      backendLabels[result.backend],
      result.lockkit ? `**${result.library}**` : result.library,
      integer(result.uncontended),
      handoff ? milliseconds(handoff.p50) : '—',
      handoff ? milliseconds(handoff.p99) : '—',
      workers ? integer(workers.perSecond) : '—',
      workers ? `${Math.min(...workers.perWorker)}–${Math.max(...workers.perWorker)}` : '—',
      held ? (held.connections === undefined ? 'n/a' : String(held.connections)) : '—',
      held?.heapPerLock === undefined ? '—' : `${(held.heapPerLock / 1024).toFixed(2)} KiB`,
      held ? `${integer(held.acquireMs)} ms` : '—',
    ];
  });
}

/** A Markdown table, padded so that it also reads well in a terminal. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: ReadonlySet<number> = new Set(),
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, 3, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    `| ${cells
      .map((cell, column) =>
        rightAligned.has(column)
          ? cell.padStart(widths[column] ?? 0)
          : cell.padEnd(widths[column] ?? 0),
      )
      .join(' | ')} |`;
  const rule = `|${widths
    .map((width, column) =>
      rightAligned.has(column) ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2),
    )
    .join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** The numeric columns of {@link benchHeader}. */
export const benchNumericColumns: ReadonlySet<number> = new Set([2, 3, 4, 5, 6, 7, 8, 9]);

/** Footnotes: what was skipped or failed, per contender. */
export function benchNotes(results: readonly ContenderResult[]): string[] {
  return results.flatMap((result) =>
    result.notes.map((note) => `${backendLabels[result.backend]}, ${result.library}: ${note}`),
  );
}
