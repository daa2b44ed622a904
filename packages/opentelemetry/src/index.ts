/**
 * `@lockkit/opentelemetry`: OpenTelemetry spans and metrics for every lockkit lock, through
 * `@opentelemetry/api` only. Call {@link instrumentLocks} once, after your SDK is set up.
 *
 * @module
 */
export {
  type InstrumentLocksOptions,
  instrumentationScope,
  instrumentLocks,
  type LockInstrumentation,
} from './instrument-locks.js';
export type { LockNameMode } from './lock-attributes.js';
export {
  holdBucketsSeconds,
  lockAttributes,
  lockMetricNames,
  lockSpanEventNames,
  lockSpanNames,
  waitBucketsSeconds,
} from './telemetry-names.js';
