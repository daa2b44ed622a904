import type { LockKind } from '@lockkit/core';
import type { Attributes } from '@opentelemetry/api';
import { baseAttributes, type LockNamer } from './lock-attributes.js';
import { lockAttributes } from './telemetry-names.js';

/** A running total behind an asynchronous instrument: one attribute set and its value. */
export interface Tally {
  readonly attributes: Attributes;
  value: number;
}

/** Running totals by attribute set, for one asynchronous instrument. */
export class Tallies {
  readonly #byKey = new Map<string, Tally>();

  /** The tally of `attributes`, whose identity is `key`. */
  get(key: string, attributes: Attributes): Tally {
    let tally = this.#byKey.get(key);
    if (!tally) {
      tally = { attributes, value: 0 };
      this.#byKey.set(key, tally);
    }
    return tally;
  }

  values(): IterableIterator<Tally> {
    return this.#byKey.values();
  }
}

/** The running totals of the counters and of the held-locks count. */
export interface LockTallies {
  readonly acquires: Tallies;
  readonly lost: Tallies;
  readonly extensions: Tallies;
  readonly held: Tallies;
}

/** Empty {@link LockTallies}. */
export function newTallies(): LockTallies {
  return {
    acquires: new Tallies(),
    lost: new Tallies(),
    extensions: new Tallies(),
    held: new Tallies(),
  };
}

/** Attribute sets derived from a series by one more attribute (and that set's tally). */
export interface Derived {
  readonly span: Attributes;
  readonly metric: Attributes;
  readonly tally: Tally;
}

/**
 * The attribute sets of one (backend, kind, name), built once and reused by every event (the
 * SDK copies span attributes and hashes metric attributes itself, so sharing them is safe;
 * building them per event was a good part of the instrumentation's cost).
 */
export class LockSeries {
  /** Backend, primitive, mode and the name as shown: for spans. */
  readonly spanAttributes: Attributes;
  /** Backend, primitive, mode (and the name with `metricsByName`): for metric points. */
  readonly metricAttributes: Attributes;
  readonly #key: string;
  readonly #tallies: LockTallies;
  readonly #derived = new Map<string, Derived>();
  readonly #holdEnds = new Map<string, Attributes>();
  #held: Tally | undefined;

  constructor(span: Attributes, metric: Attributes, key: string, tallies: LockTallies) {
    this.spanAttributes = span;
    this.metricAttributes = metric;
    this.#key = key;
    this.#tallies = tallies;
  }

  /** The held-locks tally of {@link metricAttributes} (created at the first grant). */
  get held(): Tally {
    this.#held ??= this.#tallies.held.get(this.#key, this.metricAttributes);
    return this.#held;
  }

  /** An acquire that ended with `outcome` (`error.type` too for an error, then not cached). */
  acquired(outcome: string, errorType?: string): Derived {
    if (errorType === undefined)
      return this.#with('acquires', lockAttributes.acquireOutcome, outcome);
    const extra = {
      [lockAttributes.acquireOutcome]: outcome,
      [lockAttributes.errorType]: errorType,
    };
    return this.#derive(
      'acquires',
      extra,
      `${lockAttributes.acquireOutcome}=${outcome}\u0000${errorType}`,
    );
  }

  /** A loss for `reason`. */
  lost(reason: string): Tally {
    return this.#with('lost', lockAttributes.lostReason, reason).tally;
  }

  /** An extension that ended with `outcome`. */
  extension(outcome: string): Tally {
    return this.#with('extensions', lockAttributes.extensionOutcome, outcome).tally;
  }

  /** The metric attributes of a hold that ended with `outcome` (for the hold-time histogram). */
  holdEnded(outcome: string): Attributes {
    let attributes = this.#holdEnds.get(outcome);
    if (!attributes) {
      attributes = { ...this.metricAttributes, [lockAttributes.holdOutcome]: outcome };
      this.#holdEnds.set(outcome, attributes);
    }
    return attributes;
  }

  #with(tallies: keyof LockTallies, attribute: string, value: string): Derived {
    const id = `${attribute}=${value}`;
    let derived = this.#derived.get(id);
    if (!derived) {
      derived = this.#derive(tallies, { [attribute]: value }, id);
      this.#derived.set(id, derived);
    }
    return derived;
  }

  #derive(tallies: keyof LockTallies, extra: Attributes, id: string): Derived {
    const metric = { ...this.metricAttributes, ...extra };
    return {
      span: { ...this.spanAttributes, ...extra },
      metric,
      tally: this.#tallies[tallies].get(`${this.#key}\u0000${id}`, metric),
    };
  }
}

/** How many series are remembered before the cache starts over (names can be unbounded). */
const seriesCacheSize = 1024;

/** The series of every (backend, kind, name) seen lately. */
export class SeriesCache {
  readonly #tallies: LockTallies;
  readonly #namer: LockNamer;
  readonly #metricsByName: boolean;
  readonly #showNames: boolean;
  readonly #byBackend = new Map<string, Map<LockKind, Map<string, LockSeries>>>();
  #size = 0;

  /**
   * `showNames`: whether any signal shows the name (spans are on, or `metricsByName`); if
   * not, the `lockName` function is never called.
   */
  constructor(tallies: LockTallies, namer: LockNamer, metricsByName: boolean, showNames: boolean) {
    this.#tallies = tallies;
    this.#namer = namer;
    this.#metricsByName = metricsByName;
    this.#showNames = showNames;
  }

  get(backend: string, kind: LockKind, name: string): LockSeries {
    if (this.#size >= seriesCacheSize) {
      this.#byBackend.clear();
      this.#size = 0;
    }
    let byKind = this.#byBackend.get(backend);
    if (!byKind) {
      byKind = new Map();
      this.#byBackend.set(backend, byKind);
    }
    let byName = byKind.get(kind);
    if (!byName) {
      byName = new Map();
      byKind.set(kind, byName);
    }
    let series = byName.get(name);
    if (!series) {
      series = this.#create(backend, kind, name);
      byName.set(name, series);
      this.#size += 1;
    }
    return series;
  }

  #create(backend: string, kind: LockKind, name: string): LockSeries {
    const shown = this.#showNames ? this.#namer.valueOf(name) : undefined;
    const span = baseAttributes(backend, kind, shown);
    const metric = this.#metricsByName ? span : baseAttributes(backend, kind, undefined);
    const key = JSON.stringify([backend, kind, this.#metricsByName ? (shown ?? null) : null]);
    return new LockSeries(span, metric, key, this.#tallies);
  }
}
