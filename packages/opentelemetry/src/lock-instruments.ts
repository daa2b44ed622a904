import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { holdBucketsSeconds, lockMetricNames, waitBucketsSeconds } from './telemetry-names.js';

/** The metric instruments, created once per instrumentation. */
export interface LockInstruments {
  readonly waitDuration: Histogram;
  readonly holdDuration: Histogram;
  readonly acquires: Counter;
  readonly lost: Counter;
  readonly extensions: Counter;
  readonly held: UpDownCounter;
}

/** Creates the instruments of {@link lockMetricNames} on `meter`. */
export function createInstruments(meter: Meter): LockInstruments {
  return {
    waitDuration: meter.createHistogram(lockMetricNames.waitDuration, {
      unit: 's',
      description:
        'Time from an acquire call to the grant or to giving up (timeout, abort, error), including any wait.',
      advice: { explicitBucketBoundaries: [...waitBucketsSeconds] },
    }),
    holdDuration: meter.createHistogram(lockMetricNames.holdDuration, {
      unit: 's',
      description: 'Time from the grant to the release or the loss of the lock.',
      advice: { explicitBucketBoundaries: [...holdBucketsSeconds] },
    }),
    acquires: meter.createCounter(lockMetricNames.acquires, {
      unit: '{acquire}',
      description: 'Finished acquire calls, by outcome (granted, timeout, aborted, error).',
    }),
    lost: meter.createCounter(lockMetricNames.lost, {
      unit: '{lock}',
      description: 'Held locks that were lost, by reason (expired, revoked, release_failed).',
    }),
    extensions: meter.createCounter(lockMetricNames.extensions, {
      unit: '{extension}',
      description: 'Finished lease extensions, by outcome (extended, refused, failed).',
    }),
    held: meter.createUpDownCounter(lockMetricNames.held, {
      unit: '{lock}',
      description: 'Locks granted and not yet released or lost.',
    }),
  };
}
