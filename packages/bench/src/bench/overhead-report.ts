import { backendLabels } from '../backends/backend-ids.js';
import type { ContenderResult } from './bench-result.js';

/** The label of the instrumented rows (lockkit with @lockkit/opentelemetry on). */
export const instrumentedLibrary = 'lockkit + OpenTelemetry';
const whole = (value: number): string => Math.round(value).toLocaleString('en-US');

/**
 * One line per backend: plain lockkit's uncontended rate next to the same with
 * `@lockkit/opentelemetry` on (the same interleaved run), the ratio, the time the
 * instrumentation adds to one acquire + release, and the CPU time each took (the steadier
 * figure on a busy machine, where more CPU per call also means longer waits to be scheduled).
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
    const parts = [
      `off ${whole(off)}/s, on ${whole(on)}/s: ${Math.round((100 * on) / off)} %, ${signed((1 / on - 1 / off) * 1e6)} µs per acquire + release`,
    ];
    const cpuOff = plain.uncontendedCpuMicros ?? Number.NaN;
    const cpuOn = instrumented.uncontendedCpuMicros ?? Number.NaN;
    if (Number.isFinite(cpuOff) && Number.isFinite(cpuOn)) {
      parts.push(
        `CPU time ${cpuOff.toFixed(0)} → ${cpuOn.toFixed(0)} µs (${signed(cpuOn - cpuOff)} µs)`,
      );
    }
    lines.push(`- **${backendLabels[backend]}** — ${parts.join('; ')}.`);
  }
  return lines;
}

function signed(micros: number): string {
  return `${micros >= 0 ? '+' : '−'}${Math.abs(micros).toFixed(0)}`;
}
