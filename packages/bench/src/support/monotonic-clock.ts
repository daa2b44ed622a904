/**
 * Milliseconds on the machine's CLOCK_MONOTONIC (`process.hrtime`), which every process on the
 * host shares: a time taken in a chaos worker and one taken in the orchestrator are directly
 * comparable. (`performance.now()` is not: its origin is each process's start.)
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
