import type { LockKind } from '@lockkit/core';
import type { ProviderSpec } from '../backends/provider-spec.js';

/**
 * What the workers do: `mutex` hammers mutexes (acquire → writes → release); `election`
 * campaigns in elections and, while leader, does fenced leader work with its epoch;
 * `rwlock` takes RW locks, as a reader or (one time in {@link WorkerConfig.writeShare}) a
 * writer; `semaphore` takes permits of semaphores of {@link WorkerConfig.maxCount}.
 */
export type ChaosScenario = 'mutex' | 'election' | 'rwlock' | 'semaphore';

/** What a chaos worker is told to do (its one command-line argument, as JSON). */
export interface WorkerConfig {
  readonly spec: ProviderSpec;
  readonly scenario: ChaosScenario;
  /** The mutex (or election) names it works on, one loop each. */
  readonly locks: readonly string[];
  /** Time inside a critical section (split around its one write), ms. */
  readonly holdMs: number;
  /** Longest pause between critical sections, ms (uniform from 0). */
  readonly thinkMaxMs: number;
  /** Timeout of each acquire, ms. */
  readonly acquireTimeoutMs: number;
  /** `election`: fenced writes per term (one every `holdMs / 2`) before the leader resigns. */
  readonly termWrites: number;
  /** `rwlock`: the share of acquisitions that are writes, in [0, 1]. */
  readonly writeShare: number;
  /** `semaphore`: each semaphore's `maxCount`. */
  readonly maxCount: number;
}

/** The bounds a worker's provider declares (`provider.capabilities`). */
export interface DeclaredBounds {
  readonly lostDetectionMs: number;
  readonly abandonedReleaseMs: number;
  readonly leases: boolean;
}

/** Fields every report about one grant carries. */
interface GrantFields {
  readonly lock: string;
  /** Per-process sequence number of the grant: `(pid, grant)` identifies it. */
  readonly grant: number;
  readonly token: bigint;
  /** The handle's `kind` (absent: `mutex`; an election's term is its mutex). */
  readonly kind?: LockKind;
  /** CLOCK_MONOTONIC ms (see monotonic-clock.ts) when the worker made the statement. */
  readonly at: number;
}

/**
 * Worker → orchestrator. `enter` (right after acquire returned, or a leader's first write: its
 * claim) and `write` (mid critical section, or the leader's work) are writes to the fenced resource and wait for an `ack`; with `exit` (just before
 * `release()`) they are the holder's statements "at `at`, `handle.signal.aborted` was
 * `aborted`", read in the same synchronous step as the clock.
 */
export type WorkerReport =
  | { readonly type: 'ready'; readonly bounds: DeclaredBounds }
  | ({
      readonly type: 'enter' | 'write';
      readonly id: number;
      readonly aborted: boolean;
      /** `enter` only: when the worker called `acquire()`. */
      readonly requestedAt?: number;
    } & GrantFields)
  | ({ readonly type: 'exit'; readonly aborted: boolean } & GrantFields)
  | ({ readonly type: 'lost'; readonly reason: string } & GrantFields)
  | ({
      readonly type: 'released';
      /** What `release()` resolved (`resigned`: the end of a leader's term, no result). */
      readonly result: boolean | 'threw' | 'resigned';
      readonly error?: string;
    } & GrantFields)
  | {
      readonly type: 'acquire-error';
      readonly lock: string;
      readonly at: number;
      readonly code: string;
      readonly message: string;
    }
  | { readonly type: 'fatal'; readonly at: number; readonly message: string }
  | { readonly type: 'done' };

/** Orchestrator → worker. */
export type OrchestratorMessage =
  | { readonly type: 'ack'; readonly id: number; readonly accepted: boolean }
  | { readonly type: 'stop' };
