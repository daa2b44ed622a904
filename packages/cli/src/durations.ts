import { UsageError } from './usage-error.js';

const units: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration option: milliseconds (`500`), or a number with a unit (`500ms`, `30s`,
 * `5m`, `1h`); `infinity` where `allowInfinity`. Throws {@link UsageError} otherwise.
 */
export function parseDuration(option: string, text: string, allowInfinity = false): number {
  if (allowInfinity && /^(inf|infinity|forever)$/i.test(text)) return Number.POSITIVE_INFINITY;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const value = match ? Number(match[1]) * (units[match[2] ?? 'ms'] ?? 1) : Number.NaN;
  if (!Number.isFinite(value) || value > 2_147_483_647) {
    throw new UsageError(
      `${option} takes a duration such as 500, 500ms, 30s or 5m${allowInfinity ? ' (or infinity)' : ''}; got "${text}"`,
    );
  }
  return Math.round(value);
}
