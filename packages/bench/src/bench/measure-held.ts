import type { ServerHandle } from '@lockkit/testkit';
import { clientConnections } from '../backends/server-probes.js';
import type { Contender, Release } from './contender.js';

/** One client holding many locks at once. */
export interface HeldResult {
  readonly count: number;
  /** Client connections the servers had open while all were held (summed over nodes). */
  readonly connections: number | undefined;
  /** Heap growth per held lock, bytes (after a forced GC); undefined without --expose-gc. */
  readonly heapPerLock: number | undefined;
  readonly acquireMs: number;
  readonly releaseMs: number;
}

const batch = 500;

/**
 * One client takes `count` distinct locks (500 at a time), then the servers' client
 * connections and the client's heap growth are read, then everything is released.
 */
export async function measureHeld(
  contender: Contender,
  count: number,
  servers: readonly ServerHandle[],
): Promise<HeldResult> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const client = await contender.open();
  try {
    // Warm: connections and scripts exist before the baseline.
    await (await client.acquire('bench:held:warm'))();
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const releases: Release[] = [];
    const started = performance.now();
    for (let offset = 0; offset < count; offset += batch) {
      const size = Math.min(batch, count - offset);
      releases.push(
        ...(await Promise.all(
          Array.from({ length: size }, (_, index) =>
            client.acquire(`bench:held:${offset + index}`),
          ),
        )),
      );
    }
    const acquireMs = performance.now() - started;
    gc?.();
    const heapPerLock = gc ? (process.memoryUsage().heapUsed - heapBefore) / count : undefined;
    const connections =
      servers.length === 0
        ? undefined
        : (await Promise.all(servers.map((server) => clientConnections(server)))).reduce(
            (sum, value) => sum + value,
            0,
          );
    const releaseStarted = performance.now();
    for (let offset = 0; offset < releases.length; offset += batch) {
      await Promise.all(releases.slice(offset, offset + batch).map((release) => release()));
    }
    return {
      count,
      connections,
      heapPerLock,
      acquireMs,
      releaseMs: performance.now() - releaseStarted,
    };
  } finally {
    await client.close();
  }
}
