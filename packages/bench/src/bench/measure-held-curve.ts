import { quantile } from '../support/statistics.js';
import type { Contender, Release } from './contender.js';

/** One point of the held-locks curve. */
export interface HeldPoint {
  /** Locks held by the one client. */
  readonly held: number;
  /** Rate at which the locks of this step were taken (500 at a time), per second. */
  readonly acquirePerSecond: number;
  /** Acquire + release of one more lock while `held` are held: p50 and p99, ms. */
  readonly probeP50Ms: number;
  readonly probeP99Ms: number;
  /** Heap growth per held lock since before the first, bytes (forced GC); needs --expose-gc. */
  readonly heapPerLock: number | undefined;
}

const batch = 500;

/**
 * One client takes locks until it holds each of `counts` (ascending) in turn; at each count
 * it times `probeCycles` acquire + release cycles of one more lock and reads its heap. Then
 * it releases everything. `progress` hears of each step.
 */
export async function measureHeldCurve(
  contender: Contender,
  counts: readonly number[],
  probeCycles: number,
  progress: (line: string) => void = () => undefined,
): Promise<HeldPoint[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const client = await contender.open();
  const releases: Release[] = [];
  try {
    await (await client.acquire('bench:scale:probe'))(); // connections exist before the baseline
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const points: HeldPoint[] = [];
    for (const count of counts) {
      const started = performance.now();
      const from = releases.length;
      while (releases.length < count) {
        const offset = releases.length;
        const size = Math.min(batch, count - offset);
        releases.push(
          ...(await Promise.all(
            Array.from({ length: size }, (_, index) =>
              client.acquire(`bench:scale:held:${offset + index}`),
            ),
          )),
        );
      }
      const acquirePerSecond = ((count - from) * 1000) / (performance.now() - started);
      const samples: number[] = [];
      for (let cycle = 0; cycle < probeCycles; cycle++) {
        const begun = performance.now();
        await (await client.acquire('bench:scale:probe'))();
        samples.push(performance.now() - begun);
      }
      gc?.();
      const heapPerLock = gc ? (process.memoryUsage().heapUsed - heapBefore) / count : undefined;
      const point: HeldPoint = {
        held: count,
        acquirePerSecond,
        probeP50Ms: quantile(samples, 0.5),
        probeP99Ms: quantile(samples, 0.99),
        heapPerLock,
      };
      progress(
        `${count} held: ${acquirePerSecond.toFixed(0)}/s, probe p50 ${point.probeP50Ms.toFixed(2)} ms`,
      );
      points.push(point);
    }
    return points;
  } finally {
    for (let offset = 0; offset < releases.length; offset += batch) {
      await Promise.allSettled(releases.slice(offset, offset + batch).map((release) => release()));
    }
    await client.close();
  }
}
