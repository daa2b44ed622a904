import { describe, expect, it } from 'vitest';
import type { BackendId } from '../src/backends/backend-ids.js';
import { fullScaleSettings } from '../src/bench/bench-settings.js';
import type { Contender } from '../src/bench/contender.js';
import type { HeldPoint } from '../src/bench/measure-held-curve.js';
import { combineProcessCounts } from '../src/bench/measure-processes.js';
import { decadeRange, scaleChart } from '../src/bench/scale-chart.js';
import { heldRows, processRows, scaleMarkdown } from '../src/bench/scale-report.js';
import type { ScaleResult } from '../src/bench/scale-result.js';
import { scaleTasks } from '../src/bench/scale-run.js';

const curve = (base: number): HeldPoint[] =>
  [1000, 10_000, 100_000].map((held, index) => ({
    held,
    acquirePerSecond: 5000 / (index + 1),
    probeP50Ms: base * (index + 1),
    probeP99Ms: base * 4 * (index + 1),
    heapPerLock: 900 - index * 100,
  }));

const results: ScaleResult[] = [
  {
    backend: 'postgres',
    library: 'lockkit',
    lockkit: true,
    processes: combineProcessCounts([
      { perWorker: [10, 12], elapsedMs: 1000 },
      { perWorker: [9, 14], elapsedMs: 1100 },
    ]),
    held: curve(0.4),
    notes: [],
  },
  {
    backend: 'postgres',
    library: 'raw pg_advisory_lock / unlock',
    lockkit: false,
    processes: combineProcessCounts([{ perWorker: [25, 25, 5], elapsedMs: 1100 }]),
    held: [],
    notes: [],
  },
  {
    backend: 'zookeeper',
    library: 'lockkit',
    lockkit: true,
    processes: undefined,
    held: curve(1.5),
    notes: ['workers failed: <boom>'],
  },
];

describe('scale rows', () => {
  it('adds the processes up over the longest run: rate, workers, fewest and most', () => {
    const combined = combineProcessCounts([
      { perWorker: [10, 12], elapsedMs: 1000 },
      { perWorker: [9, 14], elapsedMs: 2000 },
    ]);
    expect(combined).toEqual({ processes: 2, workers: 4, perSecond: 22.5, fewest: 9, most: 14 });
    expect(Number.isNaN(combineProcessCounts([]).perSecond)).toBe(true);
  });

  it('compares lockkit with the raw row of its backend only', () => {
    const rows = processRows(results);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual(['PostgreSQL', '**lockkit**', '2 × 2', '41', '9 / 14', '82 %']);
    expect(rows[1]?.[5]).toBe('');
  });

  it('lists one held row per count, and the report names failures', () => {
    const rows = heldRows(results);
    expect(rows.map((row) => row[2])).toEqual([
      '1,000',
      '10,000',
      '100,000',
      '1,000',
      '10,000',
      '100,000',
    ]);
    expect(rows[1]).toEqual(['PostgreSQL', '**lockkit**', '10,000', '2500', '0.80 / 3.20', '800']);
    const markdown = scaleMarkdown(results, {
      date: '2026-11-24T22:00:00Z',
      command: 'pnpm bench --scale',
      cpus: 2,
      cpuModel: 'cpu',
      memoryGiB: 4,
      node: 'v22',
      os: 'linux',
      loadBefore: [1, 1, 1],
      loadAfter: [2, 2, 2],
      servers: {},
      durationSeconds: 60,
      quick: false,
    });
    expect(markdown).toContain('ZooKeeper, lockkit: workers failed: <boom>');
    expect(markdown).toContain('benchmarks-scale.svg');
  });

  it('draws one line per lockkit backend on log axes, escaped, without NaN', () => {
    const svg = scaleChart(results, 'held & more', 'subtitle');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('held &amp; more');
    // 3 panels × 2 lockkit backends; the raw row has no curve.
    expect(svg.match(/<polyline /g)).toHaveLength(6);
    expect(svg).toContain('lockkit, ZooKeeper');
    expect(svg).not.toContain('NaN');
    expect(svg).not.toContain('Infinity');
  });

  it('draws a backend in one colour: defaults solid, options dashed, the raw client dotted', () => {
    const more: ScaleResult[] = [
      results[0]!,
      { ...results[0]!, library: 'lockkit (sharedConnections: 32)', held: curve(0.2) },
      { ...results[1]!, held: curve(0.8).slice(0, 2) },
      results[2]!,
    ];
    const polylines = scaleChart(more, 'title', 'subtitle').match(/<polyline [^>]*>/g) ?? [];
    expect(polylines).toHaveLength(12);
    const first = polylines.slice(0, 4); // the first panel: PostgreSQL ×3, then ZooKeeper
    const colour = (line: string | undefined) => /stroke="(#[0-9a-f]+)"/.exec(line ?? '')?.[1];
    expect(new Set(first.slice(0, 3).map(colour)).size).toBe(1);
    expect(colour(first[3])).not.toBe(colour(first[0]));
    expect(first.map((line) => /stroke-dasharray="([^"]+)"/.exec(line)?.[1])).toEqual([
      undefined,
      '7 4',
      '2 3',
      undefined,
    ]);
  });

  it('plans workers for every waiting row, curves for lockkit, raw SQL clients to the limit', () => {
    const settings = { ...fullScaleSettings, heldCounts: [1000, 30_000, 100_000] };
    const contender = (backend: BackendId, library: string, more = {}): Contender => ({
      backend,
      library,
      lockkit: library.startsWith('lockkit'),
      waits: true,
      holdsMany: true,
      open: () => Promise.reject(new Error('not opened')),
      ...more,
    });
    const plan = (contenders: Contender[], variants: Contender[] = []) =>
      scaleTasks(contenders, variants, settings).map((task) => [
        task.contender.library,
        task.workers,
        task.heldCounts,
      ]);
    const all = [1000, 30_000, 100_000];
    expect(
      plan(
        [
          contender('postgres', 'lockkit'),
          contender('postgres', 'lockkit otel', { uncontendedOnly: true }),
          contender('postgres', 'lockkit (recordHolds: false)', { variant: true }),
          contender('postgres', 'raw pg_advisory_lock'),
          contender('postgres', 'advisory-lock', { holdsMany: 'one connection per lock' }),
        ],
        [contender('postgres', 'lockkit (sharedConnections: 32)', { variant: true })],
      ),
    ).toEqual([
      ['lockkit', true, all],
      ['lockkit (recordHolds: false)', true, []],
      ['raw pg_advisory_lock', true, [1000, 30_000]],
      ['advisory-lock', true, []],
      ['lockkit (sharedConnections: 32)', false, all],
    ]);
    expect(plan([contender('redis', 'raw SET NX')])).toEqual([['raw SET NX', true, []]]);
    expect(plan([contender('file', 'lockkit', { waits: 'no' })])).toEqual([]);
  });

  it('spans whole decades, and a flat or empty series still gets one', () => {
    expect(decadeRange([1000, 100_000])).toEqual({ min: 3, max: 5 });
    expect(decadeRange([0.4, 1.6])).toEqual({ min: -1, max: 1 });
    expect(decadeRange([100])).toEqual({ min: 2, max: 3 });
    expect(decadeRange([])).toEqual({ min: 0, max: 1 });
  });
});
