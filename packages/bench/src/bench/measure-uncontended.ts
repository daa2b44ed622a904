import { median } from '../support/statistics.js';
import type { Contender, LockClient } from './contender.js';

/**
 * Acquire + release cycles per second on a lock nobody else wants, for every contender of a
 * backend: short slices taken in turns (so drifting machine load hits all alike), after 300 ms
 * of warm-up slices each; the median slice counts. A contender that fails gets NaN and an error.
 * A client's `enter`/`leave` run around each of its slices, outside the timed loop. Also the
 * process's CPU time per cycle (median slice): less sensitive than the rate to other processes
 * on a busy machine, and all this contender's, as it runs alone in its slice.
 */
export async function measureUncontended(
  contenders: readonly Contender[],
  slices: number,
  sliceMs: number,
): Promise<{ rates: number[]; cpuMicros: number[]; errors: (string | undefined)[] }> {
  const errors: (string | undefined)[] = contenders.map(() => undefined);
  const clients: (LockClient | undefined)[] = await Promise.all(
    contenders.map((contender, index) =>
      contender.open().catch((error: unknown) => {
        errors[index] = `open: ${String(error)}`;
        return undefined;
      }),
    ),
  );
  const rates: number[][] = contenders.map(() => []);
  const cpu: number[][] = contenders.map(() => []);
  try {
    const warmupSlices = Math.ceil(300 / sliceMs);
    for (let slice = -warmupSlices; slice < slices; slice++) {
      for (const [index, client] of clients.entries()) {
        if (!client || errors[index]) continue;
        const name = `bench:uncontended:${index}`;
        let cycles = 0;
        client.enter?.();
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        try {
          while (performance.now() - started < sliceMs) {
            await (await client.acquire(name))();
            cycles += 1;
          }
        } catch (error) {
          errors[index] = String(error);
          continue;
        } finally {
          client.leave?.();
        }
        if (slice >= 0) {
          const used = process.cpuUsage(cpuBefore);
          rates[index]?.push((cycles * 1000) / (performance.now() - started));
          cpu[index]?.push((used.user + used.system) / Math.max(1, cycles));
        }
      }
    }
  } finally {
    await Promise.allSettled(clients.map((client) => client?.close()));
  }
  return { rates: rates.map((list) => median(list)), cpuMicros: cpu.map(median), errors };
}
