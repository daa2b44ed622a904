import { setTimeout as sleep } from 'node:timers/promises';
import type { Contender, LockClient } from './contender.js';

/** What 8 workers on one lock achieved. */
export interface WorkersResult {
  /** Critical sections per second, all workers together. */
  readonly perSecond: number;
  /** Critical sections of each worker. */
  readonly perWorker: readonly number[];
  /** Times a worker entered while another was inside (must be 0; printed, not asserted). */
  readonly overlaps: number;
}

const workerCount = 8;

/**
 * 8 workers, each with its own client (as 8 processes would have), loop on one lock: acquire,
 * hold 1 ms, release, think 1 ms, for `durationMs`. Counts critical sections per worker.
 * A run that does not finish within `durationMs` + 20 s is abandoned (its clients closed).
 */
export async function measureWorkers(
  contender: Contender,
  durationMs: number,
): Promise<WorkersResult> {
  const clients: LockClient[] = await Promise.all(
    Array.from({ length: workerCount }, () => contender.open()),
  );
  const name = 'bench:workers';
  const perWorker = Array.from({ length: workerCount }, () => 0);
  let inside = 0;
  let overlaps = 0;
  let stalled: NodeJS.Timeout | undefined;
  try {
    const started = performance.now();
    const stopAt = started + durationMs;
    const work = Promise.all(
      clients.map(async (client, worker) => {
        while (performance.now() < stopAt) {
          const release = await client.acquire(name);
          inside += 1;
          if (inside > 1) overlaps += 1;
          await sleep(1);
          inside -= 1;
          await release();
          perWorker[worker] = (perWorker[worker] ?? 0) + 1;
          await sleep(1);
        }
      }),
    );
    const deadline = new Promise<never>((_, reject) => {
      stalled = setTimeout(
        () => reject(new Error(`workers still running ${durationMs + 20_000} ms after start`)),
        durationMs + 20_000,
      );
    });
    await Promise.race([work, deadline]);
    const elapsed = performance.now() - started;
    const total = perWorker.reduce((sum, count) => sum + count, 0);
    return { perSecond: (total * 1000) / elapsed, perWorker, overlaps };
  } finally {
    clearTimeout(stalled);
    await Promise.allSettled(clients.map((client) => client.close()));
  }
}
