import { instrumentLocks, type LockInstrumentation } from '@lockkit/opentelemetry';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { createProvider } from '../../backends/provider-factory.js';
import type { ProviderSpec } from '../../backends/provider-spec.js';
import type { Contender } from '../contender.js';
import { instrumentedLibrary } from '../overhead-report.js';

const success = (done: (result: ExportResult) => void): void =>
  done({ code: ExportResultCode.SUCCESS });

/** Exports nothing, at once: what the SDK does before the network is measured separately. */
const discardSpans: SpanExporter = {
  export: (_spans, done) => success(done),
  shutdown: () => Promise.resolve(),
};
const discardMetrics: PushMetricExporter = {
  export: (_metrics, done) => success(done),
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
};

/**
 * lockkit with `instrumentLocks()` on, through the real SDK as a service would run it (every
 * span sampled, a batch span processor, periodic metric export), with exporters that discard.
 * The instrumentation is process-wide, so it is switched on for this contender's slices only
 * (`enter`/`leave`): the plain lockkit row measured in between pays nothing for it.
 */
export function lockkitOtelContender(spec: ProviderSpec): Contender {
  return {
    backend: spec.backend,
    library: instrumentedLibrary,
    lockkit: true,
    waits: true,
    holdsMany: true,
    uncontendedOnly: true,
    async open() {
      const provider = await createProvider(spec);
      const tracerProvider = new BasicTracerProvider({
        spanProcessors: [new BatchSpanProcessor(discardSpans)],
      });
      const meterProvider = new MeterProvider({
        readers: [new PeriodicExportingMetricReader({ exporter: discardMetrics })],
      });
      let instrumentation: LockInstrumentation | undefined;
      return {
        enter() {
          instrumentation = instrumentLocks({ tracerProvider, meterProvider });
        },
        leave() {
          instrumentation?.dispose();
        },
        async acquire(name) {
          const handle = await provider.createLock(name).acquire();
          return () => handle.release();
        },
        async close() {
          instrumentation?.dispose();
          await provider.close();
          await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
        },
      };
    },
  };
}
