/** A histogram's buckets: `counts[i]` observations ≤ `boundaries[i]` (and above the one before); one more count for +Inf. */
export interface Buckets {
  readonly boundaries: readonly number[];
  readonly counts: readonly number[];
}

/** `later - earlier`, bucket by bucket: the observations between two cumulative collections. */
export function bucketDelta(later: Buckets, earlier: Buckets | undefined): Buckets {
  if (!earlier) return later;
  return {
    boundaries: later.boundaries,
    counts: later.counts.map((count, index) => count - (earlier.counts[index] ?? 0)),
  };
}

/** Adds histograms with the same boundaries (e.g. the outcomes of one metric). */
export function bucketSum(histograms: readonly Buckets[]): Buckets | undefined {
  const [first, ...rest] = histograms;
  if (!first) return undefined;
  return {
    boundaries: first.boundaries,
    counts: first.counts.map((count, index) =>
      rest.reduce((sum, other) => sum + (other.counts[index] ?? 0), count),
    ),
  };
}

/**
 * The `fraction` quantile of a bucketed histogram, the way Prometheus's `histogram_quantile`
 * estimates it: find the bucket holding the rank and interpolate linearly inside it (from 0
 * for the first bucket); a rank in the +Inf bucket gives the highest finite boundary. NaN
 * when the histogram is empty.
 */
export function histogramQuantile(fraction: number, histogram: Buckets): number {
  const total = histogram.counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return Number.NaN;
  const rank = fraction * total;
  let below = 0;
  for (const [index, count] of histogram.counts.entries()) {
    if (below + count >= rank && count > 0) {
      const upper = histogram.boundaries[index];
      if (upper === undefined) return histogram.boundaries.at(-1) ?? Number.NaN;
      const lower = index === 0 ? 0 : (histogram.boundaries[index - 1] ?? 0);
      return lower + ((upper - lower) * (rank - below)) / count;
    }
    below += count;
  }
  return histogram.boundaries.at(-1) ?? Number.NaN;
}
