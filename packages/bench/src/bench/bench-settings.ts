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
