import { backendLabels } from '../backends/backend-ids.js';
import type { ContenderResult } from './bench-result.js';

/** The label of the instrumented rows (lockkit with @lockkit/opentelemetry on). */
export const instrumentedLibrary = 'lockkit + OpenTelemetry';
const whole = (value: number): string => Math.round(value).toLocaleString('en-US');

/**
 * One line per backend: plain lockkit's uncontended rate next to the same with
 * `@lockkit/opentelemetry` on (the same interleaved run), the ratio, and the time the
 * instrumentation adds to one acquire + release.
 */
export function telemetryOverhead(results: readonly ContenderResult[]): string[] {
  const lines: string[] = [];
  for (const backend of new Set(results.map((result) => result.backend))) {
    const rows = results.filter((result) => result.backend === backend);
    const plain = rows.find((result) => result.lockkit && result.library === 'lockkit');
    const instrumented = rows.find((result) => result.library === instrumentedLibrary);
    if (!plain || !instrumented) continue;
    const off = plain.uncontended;
    const on = instrumented.uncontended;
    if (!Number.isFinite(off) || !Number.isFinite(on) || off <= 0 || on <= 0) continue;
    const addedMicros = (1 / on - 1 / off) * 1e6;
    lines.push(
      `- **${backendLabels[backend]}** — off ${whole(off)}/s, on ${whole(on)}/s: ` +
        `${Math.round((100 * on) / off)} %, ${addedMicros >= 0 ? '+' : '−'}${Math.abs(addedMicros).toFixed(0)} µs per acquire + release.`,
    );
  }
  return lines;
}
