import { setTimeout as sleep } from 'node:timers/promises';
import type { Contender } from './contender.js';

/**
 * Release-to-grant latency between two clients: one holds the lock, the other waits for it;
 * after the waiter has settled into its wait (10–30 ms, random, so a polling waiter is caught
 * at every phase of its cycle) the holder releases, and the sample is the time from the
 * release call to the waiter holding the lock. Stops after `rounds` or `budgetMs`.
 */
export async function measureHandoff(
  contender: Contender,
  rounds: number,
  budgetMs: number,
): Promise<number[]> {
  const [holder, waiter] = await Promise.all([contender.open(), contender.open()]);
  const name = 'bench:handoff';
  const samples: number[] = [];
  const stopAt = performance.now() + budgetMs;
  try {
    for (let round = 0; round < rounds && performance.now() < stopAt; round++) {
      const release = await holder.acquire(name);
      const granted = waiter.acquire(name).then((next) => ({ next, at: performance.now() }));
      await sleep(10 + Math.random() * 20);
      const releasedAt = performance.now();
      await release();
      const { next, at } = await granted;
      samples.push(at - releasedAt);
      await next();
    }
  } finally {
    await Promise.allSettled([holder.close(), waiter.close()]);
  }
  return samples;
}
