/**
 * The names this package emits: spans, span events, metrics and attributes. Names follow the
 * OpenTelemetry semantic-convention style (dot-separated namespaces, snake_case words,
 * durations in seconds, counts with `{annotation}` units); everything lockkit-specific lives
 * under `lockkit.`. Use these constants to build queries and dashboards.
 *
 * @module
 */

/** Span names. */
export const lockSpanNames = {
  /** From the acquire call to the grant or to giving up; the wait is inside it. */
  acquire: 'lock.acquire',
  /** From the grant to the release or the loss; linked to its `lock.acquire` span. */
  hold: 'lock.hold',
} as const;

/** Span event names. */
export const lockSpanEventNames = {
  /** On `lock.acquire`: the first attempt failed and the call began to wait. */
  wait: 'lock.wait',
  /** On `lock.hold`: a lease extension that did not succeed (outcome `refused` or `failed`). */
  extend: 'lock.extend',
} as const;

/** Metric instrument names. */
export const lockMetricNames = {
  /** Histogram, `s`: acquire call to grant or giving up, by outcome. */
  waitDuration: 'lockkit.lock.wait.duration',
  /** Histogram, `s`: grant to release or loss, by how the hold ended. */
  holdDuration: 'lockkit.lock.hold.duration',
  /** Counter, `{acquire}`: finished acquire calls, by outcome. */
  acquires: 'lockkit.lock.acquires',
  /** Counter, `{lock}`: holds lost, by reason. */
  lost: 'lockkit.lock.lost',
  /** Counter, `{extension}`: finished lease extensions, by outcome. */
  extensions: 'lockkit.lock.extensions',
  /** UpDownCounter, `{lock}`: holds granted and not yet released or lost. */
  held: 'lockkit.lock.held',
} as const;

/** Attribute keys. */
export const lockAttributes = {
  /** The provider's backend id: `redis`, `postgres`, `mysql`, `zookeeper`, `file`, `memory`, … */
  backend: 'lockkit.backend',
  /** `mutex`, `read_write` or `semaphore`. */
  primitive: 'lockkit.lock.primitive',
  /** `read` or `write`; only on read-write locks. */
  mode: 'lockkit.lock.mode',
  /** The lock name, raw or `sha256:<16 hex digits>` (see the `lockName` option). */
  name: 'lockkit.lock.name',
  /** `granted`, `timeout`, `aborted` or `error`. */
  acquireOutcome: 'lockkit.lock.acquire.outcome',
  /** `released` or `lost`. */
  holdOutcome: 'lockkit.lock.hold.outcome',
  /** `expired`, `revoked` or `release_failed`. */
  lostReason: 'lockkit.lock.lost.reason',
  /** `extended`, `refused` (no longer ours) or `failed` (the backend could not be reached). */
  extensionOutcome: 'lockkit.lock.extension.outcome',
  /** The hold's fencing token, as a decimal string (a bigint may exceed 2^53). */
  fencingToken: 'lockkit.lock.fencing_token',
  /** Semantic-convention `error.type`: the error's `code` (`BACKEND_UNAVAILABLE`, …) or class. */
  errorType: 'error.type',
} as const;

/** Histogram bucket boundaries (seconds) suggested to the SDK for the wait time. */
export const waitBucketsSeconds: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
];

/** Histogram bucket boundaries (seconds) suggested to the SDK for the hold time. */
export const holdBucketsSeconds: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
];
