import type { LockKind } from '@lockkit/core';
import type { BackendId } from '../backends/backend-ids.js';
import type { ChaosScenario, DeclaredBounds } from './chaos-messages.js';
import type { FaultWindow } from './fault-kinds.js';

/** Kinds of violation; any of them fails the run. */
export type ViolationKind =
  /** Two holders stated they held the lock at overlapping times, unexplained or too long. */
  | 'overlap'
  /** A grant got a token not above one of a grant that had ended before it was acquired. */
  | 'token-order'
  /** Two grants of one lock got the same token. */
  | 'duplicate-token'
  /** The fence accepted a token lower than one it had accepted (a checker self-check). */
  | 'stale-accepted'
  /** The fence accepted a write of a grant (term) after a later grant's write: see stale-write-analysis.ts. */
  | 'stale-write-accepted'
  /** A lock was not granted again within the declared bound after a fault cleared. */
  | 'stuck'
  /** `release()` resolved true although another holder had acquired the lock meanwhile. */
  | 'release-lied'
  /** `release()` threw. */
  | 'release-threw'
  /** A worker crashed, or reported an unhandled rejection / uncaught exception. */
  | 'worker-failure'
  /** Statements stamped after their receipt: the shared clock assumption failed. */
  | 'clock'
  /** A reader that asked while a writer waited was granted before it. */
  | 'writer-preference';

/** One violation, described so that a reader can find it again. */
export interface Violation {
  readonly kind: ViolationKind;
  readonly detail: string;
}

/** What one fault did. */
export interface FaultOutcome {
  readonly fault: FaultWindow;
  /** Per lock: ms from the fault clearing to the next grant (undefined: none seen). */
  readonly recoveries: readonly { readonly lock: string; readonly ms: number | undefined }[];
  /** Grants open when the fault started, among the workers it hit. */
  readonly holdersHit: number;
  /** Of those, how many `release()` calls resolved true / false. */
  readonly releasedTrue: number;
  readonly releasedFalse: number;
  /** ms from the fault's start to `handle.signal` aborting, per hit holder whose signal aborted. */
  readonly lostAfterStartMs: readonly number[];
  /** For a SIGSTOPped holder: ms from SIGCONT to its signal aborting. */
  readonly lostAfterResumeMs: readonly number[];
}

/** Overlaps inside the declared detection window, that the fence has to absorb. */
export interface ToleratedOverlaps {
  /** Older grants that overlapped a newer one (a zombie holder counts once). */
  readonly count: number;
  /** (older, newer) pairs: a zombie overlaps every grant made while it was frozen. */
  readonly pairs: number;
  /** Longest time the older holder went on stating it held the lock, ms. */
  readonly maxLagMs: number;
  /** The older holders' writes after the newer one acquired: accepted / rejected by the fence. */
  readonly writesAccepted: number;
  readonly writesRejected: number;
  /** One line per overlap (at most a few), for the report. */
  readonly examples: readonly string[];
}

/** What the fence did with writes from superseded grants (terms): see stale-write-analysis.ts. */
export interface StaleWrites {
  /** Writes from a grant superseded at the fence that the fence still accepted: violations. */
  readonly accepted: number;
  /** Writes from a superseded grant that the fence refused (what fencing is for). */
  readonly refused: number;
}

/** What the writer-preference check saw. */
export interface WriterPreference {
  /** Readers that asked after a waiting writer (by the head start) and were granted after it. */
  readonly readersHeldBack: number;
  /** Readers that asked after a waiting writer and were granted before it: violations. */
  readonly readersAhead: number;
}

/** Everything the chaos run found for one backend. */
export interface BackendChaosResult {
  readonly backend: BackendId;
  readonly scenario: ChaosScenario;
  readonly bounds: DeclaredBounds;
  readonly durationMs: number;
  readonly workersStarted: number;
  readonly grants: number;
  /** Grants per handle kind (`read`/`write` for RW locks). */
  readonly grantsByKind: Readonly<Partial<Record<LockKind, number>>>;
  readonly writesAccepted: number;
  readonly writesRejected: number;
  readonly tolerated: ToleratedOverlaps;
  /** Overlapping grants (terms) that are violations (the rest are in `tolerated`). */
  readonly overlapViolations: number;
  /** Writes from superseded grants (stale epochs): accepted (violations) and refused. */
  readonly staleWrites: StaleWrites;
  /** RW locks: readers held back behind a waiting writer, and readers let ahead of it. */
  readonly writerPreference: WriterPreference | undefined;
  /** Semaphores: their `maxCount` (undefined for the other scenarios). */
  readonly maxCount: number | undefined;
  readonly faults: readonly FaultOutcome[];
  readonly acquireErrors: Readonly<Record<string, number>>;
  readonly violations: readonly Violation[];
  /** Faults of the plan not injected (time budget, no workers). */
  readonly skipped: readonly string[];
}
