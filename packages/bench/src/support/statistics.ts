/** The `fraction` quantile (0..1) of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** The median of `values`; NaN when empty. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}
