import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channelNames, InvalidArgumentError, type LockEvent } from '@lockkit/core';
import { booleanOption, checkOptionKeys } from '@lockkit/core/backend';
import { diag, type MeterProvider, metrics, type TracerProvider, trace } from '@opentelemetry/api';
import { type LockNameMode, LockNamer } from './lock-attributes.js';
import { instrumentsOn } from './lock-instruments.js';
import { newTallies, SeriesCache } from './lock-series.js';
import { LockTelemetry } from './lock-telemetry.js';

/** Options of {@link instrumentLocks}. Unknown keys are an `InvalidArgumentError`. */
export interface InstrumentLocksOptions {
  /**
   * Where spans go.
   * @defaultValue the global tracer provider (`trace.getTracerProvider()`)
   */
  readonly tracerProvider?: TracerProvider | undefined;
  /**
   * Where metrics go. The global meter provider is read once, at the call: register your SDK
   * before calling `instrumentLocks()`, or pass it here. The instruments are created once per
   * meter provider, so counts go on across `dispose()` and a new `instrumentLocks()`.
   * @defaultValue the global meter provider (`metrics.getMeterProvider()`)
   */
  readonly meterProvider?: MeterProvider | undefined;
  /**
   * How lock names appear: `'hash'` (`sha256:` and 16 hex digits), `'raw'`, `'omit'`, or a
   * function from the name to what to show (`undefined`: omit), called once per name (the
   * result is cached). Lock names can carry user or tenant ids; the hash keeps one lock
   * recognisable across processes without showing its name (a guessable name can still be
   * guessed).
   * @defaultValue `'hash'`
   */
  readonly lockName?: LockNameMode | undefined;
  /**
   * Also put the lock name (as `lockName` shows it) on metric points: one time series per
   * lock name and attribute set. Only for a small, fixed set of names.
   * @defaultValue `false`
   */
  readonly metricsByName?: boolean | undefined;
  /**
   * Emit spans (`lock.acquire`, `lock.hold`).
   * @defaultValue `true`
   */
  readonly traces?: boolean | undefined;
  /**
   * Emit metrics (`lockkit.lock.*`).
   * @defaultValue `true`
   */
  readonly metrics?: boolean | undefined;
}

/** A running instrumentation. `dispose()` (or `using`) stops it. */
export interface LockInstrumentation extends Disposable {
  /**
   * Unsubscribes from lockkit's channels; idempotent. Holds still open get their span ended
   * (with no outcome) and leave `lockkit.lock.held`.
   */
  dispose(): void;
  /** True until `dispose()`. */
  readonly active: boolean;
}

/** The instrumentation scope name of every tracer and meter this package creates. */
export const instrumentationScope = '@lockkit/opentelemetry';

const optionKeys = [
  'tracerProvider',
  'meterProvider',
  'lockName',
  'metricsByName',
  'traces',
  'metrics',
] as const;

/**
 * Emits OpenTelemetry spans and metrics for every lock of every lockkit provider in this
 * process (it subscribes to core's `node:diagnostics_channel` events, so providers created
 * before and after the call are covered). Uses only `@opentelemetry/api`: bring your SDK.
 *
 * Nothing it does can throw into lockkit: a failure in an exporter or a `lockName` function
 * is reported through the OpenTelemetry diagnostic logger (`diag`) and the event is skipped.
 */
export function instrumentLocks(options: InstrumentLocksOptions = {}): LockInstrumentation {
  checkOptionKeys(options, optionKeys, 'instrumentLocks');
  const traces = booleanOption('traces', options.traces, true);
  const emitMetrics = booleanOption('metrics', options.metrics, true);
  const metricsByName = booleanOption('metricsByName', options.metricsByName, false);
  const lockName = checkLockName(options.lockName);
  const tracerProvider = checkProvider(options.tracerProvider, 'tracerProvider', 'getTracer');
  const meterProvider = checkProvider(options.meterProvider, 'meterProvider', 'getMeter');
  const instruments = emitMetrics
    ? instrumentsOn(meterProvider ?? metrics.getMeterProvider(), instrumentationScope)
    : undefined;
  const series = new SeriesCache(
    instruments?.tallies ?? newTallies(),
    new LockNamer(lockName),
    metricsByName,
    traces || metricsByName,
  );
  const telemetry = new LockTelemetry({
    tracer: traces
      ? (tracerProvider ?? trace.getTracerProvider()).getTracer(instrumentationScope)
      : undefined,
    instruments,
    series,
  });
  const handlers: Record<string, (event: LockEvent) => void> = {
    [channelNames.acquire]: (event) => telemetry.acquired(event),
    [channelNames.acquireFailed]: (event) => telemetry.acquireFailed(event),
    [channelNames.release]: (event) => telemetry.released(event),
    [channelNames.lost]: (event) => telemetry.lost(event),
    [channelNames.extend]: (event) => telemetry.extended(event),
  };
  const listeners = Object.entries(handlers).map(([name, handle]) => {
    const listener = (message: unknown): void => {
      try {
        handle(message as LockEvent);
      } catch (error) {
        // A throw here would surface as an uncaught exception in lockkit's caller.
        diag.error(`${instrumentationScope}: ${name} event dropped`, error);
      }
    };
    subscribe(name, listener);
    return { name, listener };
  });
  let active = true;
  const dispose = (): void => {
    if (!active) return;
    active = false;
    for (const { name, listener } of listeners) unsubscribe(name, listener);
    try {
      telemetry.endAll();
    } catch (error) {
      diag.error(`${instrumentationScope}: ending open holds failed`, error);
    }
  };
  return {
    dispose,
    [Symbol.dispose]: dispose,
    get active() {
      return active;
    },
  };
}

function checkLockName(value: unknown): LockNameMode {
  if (value === undefined) return 'hash';
  if (value === 'raw' || value === 'hash' || value === 'omit' || typeof value === 'function') {
    return value as LockNameMode;
  }
  throw new InvalidArgumentError(
    `lockName must be 'raw', 'hash', 'omit' or a function, got ${describeValue(value)}`,
  );
}

function checkProvider<T>(value: T | undefined, option: string, method: string): T | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof Reflect.get(value, method) !== 'function'
  ) {
    throw new InvalidArgumentError(
      `${option} must be an object with a ${method}() method, got ${describeValue(value)}`,
    );
  }
  return value;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  return typeof value;
}
