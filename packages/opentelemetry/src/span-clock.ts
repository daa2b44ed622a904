import type { HrTime } from '@opentelemetry/api';

/** How often the wall-clock anchor is read again (to follow clock adjustments). */
const refreshMs = 10_000;

/**
 * Span timestamps for `performance.now()` readings. lockkit's events carry monotonic
 * durations (`waitedMs`, `waitStartMs`), so spans are written with explicit times; they are
 * turned into wall-clock times on one anchor (`Date.now()` minus `performance.now()`), read
 * again at most every 10 s. A hold keeps the anchor of its grant, so the end of an acquire
 * span is exactly the start of its hold span, and every duration is the monotonic one.
 */
export class SpanClock {
  #anchorMs = 0;
  #readAt = Number.NEGATIVE_INFINITY;

  /** The anchor for a reading taken at `at` (performance.now() ms). */
  anchor(at: number): number {
    if (at - this.#readAt > refreshMs) {
      this.#anchorMs = Date.now() - at;
      this.#readAt = at;
    }
    return this.#anchorMs;
  }
}

/** The HrTime of performance.now() reading `at` on `anchor`. */
export function hrTimeAt(at: number, anchor: number): HrTime {
  const epochMs = anchor + at;
  const seconds = Math.floor(epochMs / 1000);
  const nanos = Math.round((epochMs - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}
