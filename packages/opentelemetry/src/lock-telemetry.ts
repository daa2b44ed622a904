import type { LockEvent, LockHandle } from '@lockkit/core';
import {
  type Attributes,
  type Context,
  context,
  type Exception,
  type Span,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import { baseAttributes, errorMessage, errorType, type LockNamer } from './lock-attributes.js';
import type { LockInstruments } from './lock-instruments.js';
import { hrTimeAt, SpanClock } from './span-clock.js';
import { lockAttributes, lockSpanEventNames, lockSpanNames } from './telemetry-names.js';

/** What the telemetry emits through, as instrumentLocks() configured it. */
export interface TelemetrySinks {
  /** Undefined: no spans. */
  readonly tracer: Tracer | undefined;
  /** Undefined: no metrics. */
  readonly instruments: LockInstruments | undefined;
  readonly namer: LockNamer;
  /** Put the lock name on metric points too (one series per name). */
  readonly metricsByName: boolean;
}

/** A hold being tracked: from `lockkit:acquire` to `lockkit:release` or `lockkit:lost`. */
interface Hold {
  readonly span: Span | undefined;
  /** performance.now() of the grant. */
  readonly grantedAt: number;
  /** The span clock's anchor at the grant (see SpanClock). */
  readonly anchor: number;
  /** Backend, primitive, mode (and name): the same on the held counter's +1 and -1. */
  readonly metricAttributes: Attributes;
}

/**
 * Turns lockkit's diagnostics events into spans and metric points. Holds are keyed on the
 * event's `handle` (the same object from grant to release), so the acquire, hold, extend,
 * loss and release of one acquisition meet. Times come from the events (`waitedMs`,
 * `waitStartMs`), so the acquire span is written when the acquire ends, with its real start.
 */
export class LockTelemetry {
  readonly #sinks: TelemetrySinks;
  readonly #holds = new Map<LockHandle, Hold>();
  /** Losses published before their acquire event (a backend that reports one at once). */
  readonly #lostEarly = new WeakMap<LockHandle, LockEvent>();
  readonly #clock = new SpanClock();

  constructor(sinks: TelemetrySinks) {
    this.#sinks = sinks;
  }

  /** Holds being tracked (granted, not yet released or lost). */
  get openHolds(): number {
    return this.#holds.size;
  }

  acquired(event: LockEvent): void {
    const at = performance.now();
    const { tracer, instruments } = this.#sinks;
    const { span: spanAttributes, metric } = this.#attributes(event);
    const waitedMs = event.waitedMs ?? 0;
    const outcome = { ...metric, [lockAttributes.acquireOutcome]: 'granted' };
    instruments?.waitDuration.record(waitedMs / 1000, outcome);
    instruments?.acquires.add(1, outcome);
    let span: Span | undefined;
    const anchor = this.#clock.anchor(at);
    if (tracer) {
      const parent = context.active();
      const acquire = this.#acquireSpan(tracer, parent, event, spanAttributes, 'granted', at);
      const grantedAt = hrTimeAt(at, anchor);
      acquire.end(grantedAt);
      span = tracer.startSpan(
        lockSpanNames.hold,
        {
          startTime: grantedAt,
          links: [{ context: acquire.spanContext() }],
          attributes: {
            ...spanAttributes,
            ...(event.fencingToken === undefined
              ? {}
              : { [lockAttributes.fencingToken]: event.fencingToken.toString() }),
          },
        },
        parent,
      );
    }
    const handle = event.handle;
    if (!handle) {
      span?.end(hrTimeAt(at, anchor)); // a core without handles on its events: no hold to follow
      return;
    }
    instruments?.held.add(1, metric);
    const hold: Hold = { span, grantedAt: at, anchor, metricAttributes: metric };
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
    const { tracer, instruments } = this.#sinks;
    const { span: spanAttributes, metric } = this.#attributes(event);
    const outcome = event.outcome ?? 'error';
    const failure: Attributes = { ...metric, [lockAttributes.acquireOutcome]: outcome };
    if (outcome === 'error') failure[lockAttributes.errorType] = errorType(event.error);
    instruments?.waitDuration.record((event.waitedMs ?? 0) / 1000, failure);
    instruments?.acquires.add(1, failure);
    if (!tracer) return;
    const span = this.#acquireSpan(tracer, context.active(), event, spanAttributes, outcome, at);
    const endedAt = hrTimeAt(at, this.#clock.anchor(at));
    if (outcome === 'error') {
      span.setAttribute(lockAttributes.errorType, errorType(event.error));
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
    const metric = hold ? hold.metricAttributes : this.#attributes(event).metric;
    this.#sinks.instruments?.lost.add(1, {
      ...metric,
      [lockAttributes.lostReason]: lostReason(event),
    });
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
    const metric = hold ? hold.metricAttributes : this.#attributes(event).metric;
    this.#sinks.instruments?.extensions.add(1, {
      ...metric,
      [lockAttributes.extensionOutcome]: outcome,
    });
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
   * held-locks counter, which would otherwise stay up forever.
   */
  endAll(): void {
    const at = performance.now();
    for (const hold of this.#holds.values()) {
      this.#sinks.instruments?.held.add(-1, hold.metricAttributes);
      hold.span?.end(hrTimeAt(at, hold.anchor));
    }
    this.#holds.clear();
  }

  #end(hold: Hold, lost: LockEvent | undefined): void {
    const at = performance.now();
    const { instruments } = this.#sinks;
    const outcome = lost ? 'lost' : 'released';
    instruments?.held.add(-1, hold.metricAttributes);
    instruments?.holdDuration.record((at - hold.grantedAt) / 1000, {
      ...hold.metricAttributes,
      [lockAttributes.holdOutcome]: outcome,
    });
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

  #acquireSpan(
    tracer: Tracer,
    parent: Context,
    event: LockEvent,
    attributes: Attributes,
    outcome: string,
    at: number,
  ): Span {
    const anchor = this.#clock.anchor(at);
    const startedAt = at - (event.waitedMs ?? 0);
    const span = tracer.startSpan(
      lockSpanNames.acquire,
      {
        startTime: hrTimeAt(startedAt, anchor),
        attributes: { ...attributes, [lockAttributes.acquireOutcome]: outcome },
      },
      parent,
    );
    if (event.waitStartMs !== undefined) {
      span.addEvent(lockSpanEventNames.wait, hrTimeAt(startedAt + event.waitStartMs, anchor));
    }
    return span;
  }

  #attributes(event: LockEvent): { span: Attributes; metric: Attributes } {
    const { tracer, namer, metricsByName } = this.#sinks;
    const name = tracer || metricsByName ? namer.valueOf(event.name) : undefined;
    const span = baseAttributes(event.backend, event.kind, name);
    if (metricsByName) return { span, metric: span };
    return { span, metric: tracer ? baseAttributes(event.backend, event.kind, undefined) : span };
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
