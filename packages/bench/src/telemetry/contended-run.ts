import { type ILockProvider, LockTimeoutError } from '@lockkit/core';
import { instrumentLocks, lockAttributes, lockMetricNames } from '@lockkit/opentelemetry';
import { createRedisLockProvider } from '@lockkit/redis';
import {
  DataPointType,
  type Histogram,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { type Buckets, bucketDelta, bucketSum, histogramQuantile } from './histogram-quantile.js';

/** How many workers contend for how long. */
export interface Phase {
  readonly workers: number;
  readonly seconds: number;
}

/** What the workers do: hold the lock, think, give up waiting after `timeoutMs`. */
export interface Workload {
  readonly holdMs: number;
  readonly thinkMs: number;
  readonly timeoutMs: number;
}

/** One second of the run, read off the metrics as a dashboard would. */
export interface Sample {
  /** End of the interval, seconds since the start. */
  readonly second: number;
  readonly workers: number;
  /** Wait-time percentiles in ms (histogram_quantile over the interval); NaN without waits. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  /** Acquires per second, by outcome. */
  readonly granted: number;
  readonly timedOut: number;
}

/** Collects on demand (cumulative temporality, like a Prometheus scrape). */
class ScrapeReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Workers (one provider each, as separate processes would have) loop on one Redis lock while
 * their number follows `phases`; `@lockkit/opentelemetry` records into a real SDK meter
 * provider, which is collected every second. Each sample is computed from the collected
 * points only: the wait-time histogram's bucket deltas (all outcomes) and the acquires
 * counter's deltas.
 */
export async function runContended(
  url: string,
  phases: readonly Phase[],
  workload: Workload,
  progress: (line: string) => void,
): Promise<Sample[]> {
  const reader = new ScrapeReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = instrumentLocks({ meterProvider, traces: false });
  const most = Math.max(...phases.map((phase) => phase.workers));
  const providers: ILockProvider[] = Array.from({ length: most }, () =>
    createRedisLockProvider({ nodes: url }),
  );
  let active = 0;
  let running = true;
  const worker = async (index: number, provider: ILockProvider): Promise<void> => {
    const lock = provider.createLock('orders/settlement');
    while (running) {
      if (index >= active) {
        await sleep(20);
        continue;
      }
      try {
        const handle = await lock.acquire({ timeout: workload.timeoutMs });
        await sleep(workload.holdMs);
        await handle.release();
      } catch (error) {
        if (!LockTimeoutError.isInstance(error)) throw error;
      }
      await sleep(workload.thinkMs);
    }
  };
  let failure: unknown;
  const loops = providers.map((provider, index) =>
    worker(index, provider).catch((error: unknown) => {
      failure ??= error;
      running = false;
    }),
  );
  const samples: Sample[] = [];
  try {
    let previous = readPoints(await collect(reader));
    let second = 0;
    for (const phase of phases) {
      active = phase.workers;
      progress(`${phase.workers} worker(s) for ${phase.seconds} s`);
      for (let tick = 0; tick < phase.seconds && running; tick++) {
        await sleep(1000);
        second += 1;
        const current = readPoints(await collect(reader));
        const waits = bucketDelta(current.waits, previous.waits);
        samples.push({
          second,
          workers: phase.workers,
          p50: histogramQuantile(0.5, waits) * 1000,
          p90: histogramQuantile(0.9, waits) * 1000,
          p99: histogramQuantile(0.99, waits) * 1000,
          granted: (current.acquires.get('granted') ?? 0) - (previous.acquires.get('granted') ?? 0),
          timedOut:
            (current.acquires.get('timeout') ?? 0) - (previous.acquires.get('timeout') ?? 0),
        });
        previous = current;
      }
    }
  } finally {
    running = false;
    await Promise.allSettled(loops);
    instrumentation.dispose();
    await Promise.allSettled(providers.map((provider) => provider.close()));
    await meterProvider.shutdown();
  }
  if (failure !== undefined) throw failure;
  return samples;
}

async function collect(reader: ScrapeReader): Promise<ResourceMetrics> {
  const { resourceMetrics, errors } = await reader.collect();
  if (errors.length > 0) throw errors[0];
  return resourceMetrics;
}

/** The wait-time histogram (all outcomes added) and the acquires by outcome. */
function readPoints(resourceMetrics: ResourceMetrics): {
  waits: Buckets;
  acquires: Map<string, number>;
} {
  const waits: Buckets[] = [];
  const acquires = new Map<string, number>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name === lockMetricNames.waitDuration) {
        if (metric.dataPointType !== DataPointType.HISTOGRAM) continue;
        for (const point of metric.dataPoints) waits.push((point.value as Histogram).buckets);
      } else if (metric.descriptor.name === lockMetricNames.acquires) {
        for (const point of metric.dataPoints) {
          const outcome = String(point.attributes[lockAttributes.acquireOutcome]);
          acquires.set(outcome, (acquires.get(outcome) ?? 0) + (point.value as number));
        }
      }
    }
  }
  return { waits: bucketSum(waits) ?? { boundaries: [], counts: [] }, acquires };
}
