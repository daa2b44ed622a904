import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channelNames } from '@lockkit/core';
import type { Attributes } from '@opentelemetry/api';
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** Multiplies every timing bound of these tests (LOCKKIT_TIME_SCALE, for slow machines). */
export const timeScale: number = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

/** A timing bound in ms, scaled by {@link timeScale}. */
export function scaled(ms: number): number {
  return ms * timeScale;
}

/** A metric reader the test collects from when it wants (cumulative, like Prometheus). */
class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** One metric point, flattened: a sum's value, or a histogram's count and sum (seconds). */
export interface Point {
  readonly metric: string;
  readonly attributes: Attributes;
  readonly value?: number;
  readonly count?: number;
  readonly sum?: number;
}

/** The real OpenTelemetry SDK with in-memory export: spans as they end, metrics on demand. */
export interface TestTelemetry {
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  /** Spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** Every metric point, sorted by metric name and attributes. */
  points(): Promise<Point[]>;
  shutdown(): Promise<void>;
}

export function testTelemetry(): TestTelemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    points: async () => flatten((await reader.collect()).resourceMetrics),
    shutdown: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

function flatten(resourceMetrics: ResourceMetrics): Point[] {
  const points: Point[] = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints) {
        const base = { metric: metric.descriptor.name, attributes: point.attributes };
        if (metric.dataPointType === DataPointType.HISTOGRAM) {
          const value = point.value as { count: number; sum?: number };
          points.push({ ...base, count: value.count, sum: value.sum ?? Number.NaN });
        } else {
          points.push({ ...base, value: point.value as number });
        }
      }
    }
  }
  const key = (point: Point): string =>
    `${point.metric} ${JSON.stringify(sorted(point.attributes))}`;
  return points.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function sorted(attributes: Attributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The histogram points' counts, and the other points' values, by metric and attributes. */
export function summary(points: readonly Point[]): string[] {
  return points.map((point) => {
    const attributes = Object.entries(sorted(point.attributes))
      .map(([key, value]) => `${key.replace(/^lockkit\.(lock\.)?/, '')}=${String(value)}`)
      .join(' ');
    const figure = point.count === undefined ? `${point.value}` : `count ${point.count}`;
    return `${point.metric} {${attributes}} ${figure}`;
  });
}

/** Resolves at the next `lockkit:wait` event for lock `name` (subscribe before the call). */
export function nextWait(name: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      if ((message as { name: string }).name !== name) return;
      unsubscribe(channelNames.wait, listener);
      resolve();
    };
    subscribe(channelNames.wait, listener);
  });
}

/** Resolves when `signal` aborts; rejects after `ms` (scaled). */
export function abortedWithin(signal: AbortSignal, ms: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      resolve(signal.reason);
      return;
    }
    const timer = setTimeout(() => reject(new Error(`not aborted within ${ms} ms`)), scaled(ms));
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve(signal.reason);
      },
      { once: true },
    );
  });
}

/** A span's shape, for exact comparisons. */
export function shape(span: ReadableSpan): {
  name: string;
  attributes: Attributes;
  status: number;
  events: string[];
  links: string[];
} {
  return {
    name: span.name,
    attributes: span.attributes,
    status: span.status.code,
    events: span.events.map((event) => event.name),
    links: span.links.map((link) => link.context.spanId),
  };
}

/** Milliseconds between two OpenTelemetry HrTimes. */
export function hrMs(from: [number, number], to: [number, number]): number {
  return (to[0] - from[0]) * 1000 + (to[1] - from[1]) / 1e6;
}
