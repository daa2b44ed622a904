/** How long each measurement runs. */
export interface BenchSettings {
  /** Uncontended: slices per contender (interleaved across contenders), and slice length. */
  readonly slices: number;
  readonly sliceMs: number;
  /** Handoff: rounds, and a time budget per contender (slow pollers stop early). */
  readonly handoffRounds: number;
  readonly handoffBudgetMs: number;
  /** 8 workers on one lock: how long. */
  readonly workerMs: number;
  /** Held locks: how many at once. */
  readonly heldLocks: number;
}

/**
 * `pnpm bench`: about 3–4 minutes for every backend on 2 cores. Uncontended slices are short
 * and many: the machine's rate drifts within tenths of a second, so 250 ms slices let one
 * contender's median move by a tenth between runs; 30 ms slices put the contenders of a round
 * on the same machine state.
 */
export const fullSettings: BenchSettings = {
  slices: 60,
  sliceMs: 30,
  handoffRounds: 100,
  handoffBudgetMs: 6000,
  workerMs: 3000,
  heldLocks: 10_000,
};

/** `pnpm bench --quick`: a smoke run (numbers too short to quote). */
export const quickSettings: BenchSettings = {
  slices: 2,
  sliceMs: 100,
  handoffRounds: 10,
  handoffBudgetMs: 1500,
  workerMs: 500,
  heldLocks: 1000,
};

/** How long the scale rows (`pnpm bench --scale`) run. */
export interface ScaleSettings {
  /** Many workers on one lock: processes × workers in each (each worker with its own client). */
  readonly processes: number;
  readonly workersPerProcess: number;
  readonly workerMs: number;
  /** Held locks: the counts one provider holds in turn (each step adds to the last). */
  readonly heldCounts: readonly number[];
  /** Acquire + release cycles of one more lock, timed at each count. */
  readonly probeCycles: number;
  /** The raw client rows of the held-locks curve stop at this count (one session is slow). */
  readonly rawHeldLimit: number;
}

/** `pnpm bench --scale`: 64 workers; 1 000 to 100 000 held locks (raw clients to 30 000). */
export const fullScaleSettings: ScaleSettings = {
  processes: 8,
  workersPerProcess: 8,
  workerMs: 5000,
  heldCounts: [1000, 10_000, 30_000, 100_000],
  probeCycles: 300,
  rawHeldLimit: 30_000,
};

/** `pnpm bench --scale --quick`: the same shape, small (a smoke run). */
export const quickScaleSettings: ScaleSettings = {
  processes: 2,
  workersPerProcess: 4,
  workerMs: 1000,
  heldCounts: [100, 1000],
  probeCycles: 50,
  rawHeldLimit: 1000,
};
