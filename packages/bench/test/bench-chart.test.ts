import { describe, expect, it } from 'vitest';
import { benchChart } from '../src/bench/bench-chart.js';
import { benchHighlights } from '../src/bench/bench-report.js';
import type { ContenderResult } from '../src/bench/bench-result.js';
import { benchRows, markdownTable } from '../src/bench/bench-table.js';
import { instrumentedLibrary, telemetryOverhead } from '../src/bench/overhead-report.js';

const results: ContenderResult[] = [
  {
    backend: 'postgres',
    library: 'lockkit',
    lockkit: true,
    uncontended: 1234.5,
    handoff: { p50: 0.8, p99: 4.2, samples: 100 },
    workers: { perSecond: 300, perWorker: [30, 40, 35, 36, 37, 38, 39, 41], overlaps: 0 },
    held: { count: 10_000, connections: 20, heapPerLock: 1200, acquireMs: 900, releaseMs: 400 },
    notes: [],
  },
  {
    backend: 'postgres',
    library: 'advisory-lock <2>',
    lockkit: false,
    uncontended: 45,
    handoff: undefined,
    workers: undefined,
    held: undefined,
    notes: ['no held-locks figure'],
  },
];

describe('bench output', () => {
  it('draws a standalone SVG with every contender and escaped labels', () => {
    const svg = benchChart(results, 'title & more', 'subtitle');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('title &amp; more');
    expect(svg).toContain('advisory-lock &lt;2&gt;');
    expect(svg).toContain('0.80 / 4.20');
    expect(svg).not.toContain('NaN');
    expect(svg).not.toContain('Infinity');
  });

  it('sums each backend up in one computed line', () => {
    expect(benchHighlights(results)).toEqual([
      '- **PostgreSQL** — lockkit: uncontended 1,235/s, 2743 % of advisory-lock <2>.',
    ]);
  });

  it('tabulates figures with fairness as min–max', () => {
    const [lockkit, peer] = benchRows(results);
    expect(lockkit).toContain('**lockkit**');
    expect(lockkit).toContain('30–41');
    expect(lockkit).toContain('1.17 KiB');
    expect(peer?.[3]).toBe('—');
    const table = markdownTable(['a', 'b'], [['1', '22']], new Set([1]));
    expect(table.split('\n')).toEqual(['| a   |   b |', '|-----|----:|', '| 1   |  22 |']);
  });

  it('puts lockkit with OpenTelemetry on beside plain lockkit, and what one call pays for it', () => {
    const instrumented: ContenderResult = {
      ...results[0]!,
      library: instrumentedLibrary,
      uncontended: 1000,
      uncontendedCpuMicros: 212.4,
      handoff: undefined,
      workers: undefined,
      held: undefined,
    };
    const plain = { ...results[0]!, uncontendedCpuMicros: 180 };
    const withOverhead = [plain, instrumented, results[1]!];
    expect(telemetryOverhead(withOverhead)).toEqual([
      '- **PostgreSQL** — off 1,235/s, on 1,000/s: 81 %, +190 µs per acquire + release; CPU time 180 → 212 µs (+32 µs).',
    ]);
    // The instrumented row is lockkit, not a peer: the highlights compare plain lockkit.
    expect(benchHighlights(withOverhead)).toEqual(benchHighlights(results));
    expect(telemetryOverhead(results)).toEqual([]);
  });
});
