// @lockkit/opentelemetry as an app installs it: `node telemetry-smoke.cjs` loads everything
// with require(), `node telemetry-smoke.mjs` with import. A lock on the memory provider and one
// on Redis must give the expected spans and metric points through the real SDK.
'use strict';

/** Runs the smoke with the modules the caller loaded (so ESM and CommonJS share the steps). */
async function runTelemetrySmoke({ core, redis, telemetry, sdkTrace, sdkMetrics }) {
  const env = JSON.parse(process.env.LOCKKIT_CONSUMER_SERVERS);
  const exporter = new sdkTrace.InMemorySpanExporter();
  const tracerProvider = new sdkTrace.BasicTracerProvider({
    spanProcessors: [new sdkTrace.SimpleSpanProcessor(exporter)],
  });
  class Reader extends sdkMetrics.MetricReader {
    onShutdown() {
      return Promise.resolve();
    }
    onForceFlush() {
      return Promise.resolve();
    }
  }
  const reader = new Reader();
  const meterProvider = new sdkMetrics.MeterProvider({ readers: [reader] });
  const instrumentation = telemetry.instrumentLocks({ tracerProvider, meterProvider });
  const providers = [
    core.createMemoryLockProvider(),
    redis.createRedisLockProvider({ nodes: env.redisUrls[0] }),
  ];
  try {
    for (const provider of providers) {
      const lock = provider.createLock(`consumer-telemetry-${process.pid}`);
      const holder = await lock.acquire();
      if ((await lock.tryAcquire()) !== null) throw new Error('the lock was granted twice');
      await holder.release();
    }
  } finally {
    instrumentation.dispose();
    await Promise.all(providers.map((provider) => provider.close()));
  }
  const spans = exporter
    .getFinishedSpans()
    .map(
      (span) =>
        `${span.name}:${span.attributes['lockkit.backend']}:${span.attributes['lockkit.lock.acquire.outcome'] ?? span.attributes['lockkit.lock.hold.outcome']}`,
    );
  const expected = ['memory', 'redis'].flatMap((backend) => [
    `lock.acquire:${backend}:granted`,
    `lock.acquire:${backend}:timeout`,
    `lock.hold:${backend}:released`,
  ]);
  if (JSON.stringify(spans) !== JSON.stringify(expected)) {
    throw new Error(`spans ${JSON.stringify(spans)}, expected ${JSON.stringify(expected)}`);
  }
  const { resourceMetrics } = await reader.collect();
  const acquires = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((metric) => metric.descriptor.name === telemetry.lockMetricNames.acquires);
  const total = acquires?.dataPoints.reduce((sum, point) => sum + point.value, 0);
  if (total !== 4) throw new Error(`lockkit.lock.acquires totals ${total}, expected 4`);
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  console.log(`telemetry: ${spans.length} spans, ${total} acquires counted, on memory and redis`);
}

module.exports = { runTelemetrySmoke };

if (require.main === module) {
  runTelemetrySmoke({
    core: require('@lockkit/core'),
    redis: require('@lockkit/redis'),
    telemetry: require('@lockkit/opentelemetry'),
    sdkTrace: require('@opentelemetry/sdk-trace-base'),
    sdkMetrics: require('@opentelemetry/sdk-metrics'),
  }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
