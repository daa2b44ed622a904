import type { LockEvent, LockHandle } from '@lockkit/core';
import {
  type Attributes,
  context,
  type Exception,
  type HrTime,
  type Span,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import { errorMessage, errorType } from './lock-attributes.js';
import type { LockInstruments } from './lock-instruments.js';
import type { LockSeries, SeriesCache } from './lock-series.js';
import { hrTimeAt, SpanClock } from './span-clock.js';
import { lockAttributes, lockSpanEventNames, lockSpanNames } from './telemetry-names.js';

/** What the telemetry emits through, as instrumentLocks() configured it. */
export interface TelemetrySinks {
  /** Undefined: no spans. */
  readonly tracer: Tracer | undefined;
  /** Undefined: no metrics (the series then count in tallies nobody reports). */
  readonly instruments: LockInstruments | undefined;
  readonly series: SeriesCache;
}

/** A hold being tracked: from `lockkit:acquire` to `lockkit:release` or `lockkit:lost`. */
interface Hold {
  readonly series: LockSeries;
  readonly span: Span | undefined;
  /** performance.now() of the grant. */
  readonly grantedAt: number;
  /** The span clock's anchor at the grant (see SpanClock). */
  readonly anchor: number;
}

/**
 * Turns lockkit's diagnostics events into spans and metric points. Holds are keyed on the
 * event's `handle` (the same object from grant to release), so the acquire, hold, extensions,
 * loss and release of one acquisition meet. Times come from the events (`waitedMs`,
 * `waitStartMs`), so the acquire span is written when the acquire ends, with its real start.
 */
export class LockTelemetry {
  readonly #tracer: Tracer | undefined;
  readonly #instruments: LockInstruments | undefined;
  readonly #series: SeriesCache;
  readonly #holds = new Map<LockHandle, Hold>();
  /** Losses published before their acquire event (a backend that reports one at once). */
  readonly #lostEarly = new WeakMap<LockHandle, LockEvent>();
  readonly #clock = new SpanClock();

  constructor(sinks: TelemetrySinks) {
    this.#tracer = sinks.tracer;
    this.#instruments = sinks.instruments;
    this.#series = sinks.series;
  }

  acquired(event: LockEvent): void {
    const at = performance.now();
    const tracer = this.#tracer;
    const series = this.#seriesOf(event);
    const granted = series.acquired('granted');
    this.#instruments?.waitDuration.record((event.waitedMs ?? 0) / 1000, granted.metric);
    granted.tally.value += 1;
    const anchor = this.#clock.anchor(at);
    let span: Span | undefined;
    if (tracer) {
      const parent = context.active();
      const grantedAt = hrTimeAt(at, anchor);
      const acquire = tracer.startSpan(
        lockSpanNames.acquire,
        { startTime: this.#startOf(event, at, anchor), attributes: granted.span },
        parent,
      );
      this.#waitEvent(acquire, event, at, anchor);
      acquire.end(grantedAt);
      span = tracer.startSpan(
        lockSpanNames.hold,
        {
          startTime: grantedAt,
          links: [{ context: acquire.spanContext() }],
          attributes: series.spanAttributes,
        },
        parent,
      );
      if (event.fencingToken !== undefined) {
        span.setAttribute(lockAttributes.fencingToken, event.fencingToken.toString());
      }
    }
    const handle = event.handle;
    if (!handle) {
      span?.end(hrTimeAt(at, anchor)); // a core without handles on its events: no hold to follow
      return;
    }
    series.held.value += 1;
    const hold: Hold = { series, span, grantedAt: at, anchor };
    const early = this.#lostEarly.get(handle);
    if (early) {
      this.#lostEarly.delete(handle);
      this.#end(hold, early);
    } else {
      this.#holds.set(handle, hold);
    }
  }

  acquireFailed(event: LockEvent): void {
    const at = performance.now();
    const outcome = event.outcome ?? 'error';
    const type = outcome === 'error' ? errorType(event.error) : undefined;
    const failed = this.#seriesOf(event).acquired(outcome, type);
    this.#instruments?.waitDuration.record((event.waitedMs ?? 0) / 1000, failed.metric);
    failed.tally.value += 1;
    const tracer = this.#tracer;
    if (!tracer) return;
    const anchor = this.#clock.anchor(at);
    const span = tracer.startSpan(
      lockSpanNames.acquire,
      { startTime: this.#startOf(event, at, anchor), attributes: failed.span },
      context.active(),
    );
    this.#waitEvent(span, event, at, anchor);
    const endedAt = hrTimeAt(at, anchor);
    if (type !== undefined) {
      span.recordException(asException(event.error), endedAt);
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(event.error) });
    }
    span.end(endedAt);
  }

  released(event: LockEvent): void {
    const handle = event.handle;
    const hold = handle && this.#holds.get(handle);
    if (!handle || !hold) return; // lost before, or granted before instrumentation began
    this.#holds.delete(handle);
    this.#end(hold, undefined);
  }

  lost(event: LockEvent): void {
    const handle = event.handle;
    const hold = handle && this.#holds.get(handle);
    const series = hold ? hold.series : this.#seriesOf(event);
    series.lost(lostReason(event)).value += 1;
    if (!handle) return;
    if (!hold) {
      this.#lostEarly.set(handle, event);
      return;
    }
    this.#holds.delete(handle);
    this.#end(hold, event);
  }

  extended(event: LockEvent): void {
    const hold = event.handle && this.#holds.get(event.handle);
    const outcome = event.ok ? 'extended' : event.error === undefined ? 'refused' : 'failed';
    const series = hold ? hold.series : this.#seriesOf(event);
    series.extension(outcome).value += 1;
    if (outcome !== 'extended' && hold?.span) {
      const attributes: Attributes = { [lockAttributes.extensionOutcome]: outcome };
      if (event.error !== undefined) attributes[lockAttributes.errorType] = errorType(event.error);
      hold.span.addEvent(
        lockSpanEventNames.extend,
        attributes,
        hrTimeAt(performance.now(), hold.anchor),
      );
    }
  }

  /**
   * Stops following every open hold: ends its span (with no outcome) and takes it out of the
   * held-locks count.
   */
  endAll(): void {
    const at = performance.now();
    for (const hold of this.#holds.values()) {
      hold.series.held.value -= 1;
      hold.span?.end(hrTimeAt(at, hold.anchor));
    }
    this.#holds.clear();
  }

  #end(hold: Hold, lost: LockEvent | undefined): void {
    const at = performance.now();
    const outcome = lost ? 'lost' : 'released';
    hold.series.held.value -= 1;
    this.#instruments?.holdDuration.record(
      (at - hold.grantedAt) / 1000,
      hold.series.holdEnded(outcome),
    );
    const span = hold.span;
    if (!span) return;
    const endedAt = hrTimeAt(at, hold.anchor);
    span.setAttribute(lockAttributes.holdOutcome, outcome);
    if (lost) {
      span.setAttribute(lockAttributes.lostReason, lostReason(lost));
      span.recordException(asException(lost.error), endedAt);
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(lost.error) });
    }
    span.end(endedAt);
  }

  #seriesOf(event: LockEvent): LockSeries {
    return this.#series.get(event.backend, event.kind, event.name);
  }

  /** When the acquire call began: `waitedMs` before `at`. */
  #startOf(event: LockEvent, at: number, anchor: number): HrTime {
    return hrTimeAt(at - (event.waitedMs ?? 0), anchor);
  }

  /** Marks where the call began to wait, if it did. */
  #waitEvent(span: Span, event: LockEvent, at: number, anchor: number): void {
    if (event.waitStartMs === undefined) return;
    const startedAt = at - (event.waitedMs ?? 0);
    span.addEvent(lockSpanEventNames.wait, hrTimeAt(startedAt + event.waitStartMs, anchor));
  }
}

/** `expired`, `revoked` or `release_failed` (attribute values are snake_case). */
function lostReason(event: LockEvent): string {
  return (event.reason ?? 'revoked').replace('-', '_');
}

function asException(error: unknown): Exception {
  if (error instanceof Error) return error;
  return String(error);
}
