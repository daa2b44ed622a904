import type { Histogram, Meter, MeterProvider, ObservableResult } from '@opentelemetry/api';
import { type LockTallies, newTallies, type Tallies } from './lock-series.js';
import { holdBucketsSeconds, lockMetricNames, waitBucketsSeconds } from './telemetry-names.js';

/** The metric instruments on one meter provider, and the running totals they report. */
export interface LockInstruments {
  readonly waitDuration: Histogram;
  readonly holdDuration: Histogram;
  readonly tallies: LockTallies;
}

/**
 * One set of instruments per meter provider, shared by every instrumentation on it: the
 * asynchronous instruments' callbacks stay registered for the provider's life, so counts go
 * on across `dispose()` and a new `instrumentLocks()`, and the held-locks count a disposed
 * instrumentation took back down is what gets reported.
 */
const byProvider = new WeakMap<MeterProvider, LockInstruments>();

/** The instruments of {@link lockMetricNames} on `provider` (created at the first call). */
export function instrumentsOn(provider: MeterProvider, scope: string): LockInstruments {
  let instruments = byProvider.get(provider);
  if (!instruments) {
    instruments = createInstruments(provider.getMeter(scope));
    byProvider.set(provider, instruments);
  }
  return instruments;
}

/**
 * The two histograms are synchronous; the counters and the held-locks count are asynchronous
 * (the semantic conventions allow either) and report tallies the events keep up to date:
 * adding to a number is far cheaper than a synchronous measurement, which hashes its
 * attributes every time.
 */
function createInstruments(meter: Meter): LockInstruments {
  const tallies = newTallies();
  const waitDuration = meter.createHistogram(lockMetricNames.waitDuration, {
    unit: 's',
    description:
      'Time from an acquire call to the grant or to giving up (timeout, abort, error), including any wait.',
    advice: { explicitBucketBoundaries: [...waitBucketsSeconds] },
  });
  const holdDuration = meter.createHistogram(lockMetricNames.holdDuration, {
    unit: 's',
    description: 'Time from the grant to the release or the loss of the lock.',
    advice: { explicitBucketBoundaries: [...holdBucketsSeconds] },
  });
  meter
    .createObservableCounter(lockMetricNames.acquires, {
      unit: '{acquire}',
      description: 'Finished acquire calls, by outcome (granted, timeout, aborted, error).',
    })
    .addCallback((result) => observe(result, tallies.acquires));
  meter
    .createObservableCounter(lockMetricNames.lost, {
      unit: '{lock}',
      description: 'Held locks that were lost, by reason (expired, revoked, release_failed).',
    })
    .addCallback((result) => observe(result, tallies.lost));
  meter
    .createObservableCounter(lockMetricNames.extensions, {
      unit: '{extension}',
      description: 'Finished lease extensions, by outcome (extended, refused, failed).',
    })
    .addCallback((result) => observe(result, tallies.extensions));
  meter
    .createObservableUpDownCounter(lockMetricNames.held, {
      unit: '{lock}',
      description: 'Locks granted and not yet released or lost.',
    })
    .addCallback((result) => observe(result, tallies.held));
  return { waitDuration, holdDuration, tallies };
}

function observe(result: ObservableResult, counts: Tallies): void {
  for (const tally of counts.values()) result.observe(tally.value, tally.attributes);
}
