import { describe, expect, it } from 'vitest';
import { contendedChart } from '../src/telemetry/contended-chart.js';
import type { Sample } from '../src/telemetry/contended-run.js';
import { bucketDelta, bucketSum, histogramQuantile } from '../src/telemetry/histogram-quantile.js';

describe('histogram quantiles, the way histogram_quantile() estimates them', () => {
  const boundaries = [1, 2, 4];

  it('interpolates inside the bucket that holds the rank, from 0 in the first', () => {
    expect(histogramQuantile(0.5, { boundaries, counts: [0, 10, 0, 0] })).toBe(1.5);
    expect(histogramQuantile(0.25, { boundaries, counts: [4, 0, 0, 0] })).toBe(0.25);
    expect(histogramQuantile(0.9, { boundaries, counts: [5, 0, 5, 0] })).toBe(2 + 2 * 0.8);
  });

  it('gives the highest boundary for a rank in +Inf, and NaN for no observations', () => {
    expect(histogramQuantile(0.99, { boundaries, counts: [1, 0, 0, 9] })).toBe(4);
    expect(histogramQuantile(0.5, { boundaries, counts: [0, 0, 0, 0] })).toBeNaN();
  });

  it('subtracts collections and adds outcomes bucket by bucket', () => {
    const earlier = { boundaries, counts: [1, 2, 3, 4] };
    const later = { boundaries, counts: [2, 2, 5, 4] };
    expect(bucketDelta(later, earlier).counts).toEqual([1, 0, 2, 0]);
    expect(bucketDelta(later, undefined)).toBe(later);
    expect(bucketSum([earlier, later])?.counts).toEqual([3, 4, 8, 8]);
    expect(bucketSum([])).toBeUndefined();
  });
});

describe('the contended-lock chart', () => {
  const sample = (second: number, workers: number, p50: number): Sample => ({
    second,
    workers,
    p50,
    p90: p50 * 2,
    p99: p50 * 3,
    granted: 100,
    timedOut: workers > 2 ? 10 : 0,
  });

  it('draws a standalone SVG with a band per worker count and no NaN', () => {
    const svg = contendedChart(
      [sample(1, 1, 0.4), sample(2, 1, Number.NaN), sample(3, 4, 12), sample(4, 4, 15)],
      'title <&>',
      'subtitle',
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('title &lt;&amp;&gt;');
    expect(svg).toContain('>1 worker<');
    expect(svg).toContain('>4 workers<');
    expect(svg).not.toContain('NaN');
    expect(svg).not.toContain('Infinity');
    // The missing second splits the p50 line: a lone point, then a line.
    expect(svg).toContain('<circle');
  });
});
