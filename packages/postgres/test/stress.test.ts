import { describe, expect, inject, it } from 'vitest';
import { advisoryKey, slotKey } from '../src/index.js';
import { advisoryLocks, Harness, uniqueName, waitFor } from './support.js';

const harness = new Harness(inject('lockkitServers').postgresUrl!);

/** A small deterministic generator, so a failing run can be repeated. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('under churn (timeouts and aborts racing grants)', () => {
  it('a semaphore never exceeds maxCount and leaves no slot held', async () => {
    const name = uniqueName('churn-semaphore');
    // On a fresh database the first acquire creates the sequence and the holds table (DDL,
    // once per database): done here by another provider, so the short timeouts below race
    // grants, not that one-time setup.
    await (await harness.provider().createSemaphore(uniqueName('setup'), 1).acquire()).release();
    const providers = [harness.provider(), harness.provider(), harness.provider()];
    const next = random(7);
    let inside = 0;
    let peak = 0;
    let granted = 0;
    await Promise.all(
      Array.from({ length: 60 }, async (_, task) => {
        await pause(Math.floor(next() * 50));
        const controller = new AbortController();
        const abortAfter = Math.floor(next() * 40);
        if (task % 3 === 0) setTimeout(() => controller.abort(new Error('churn')), abortAfter);
        const handle = await providers[task % 3]!.createSemaphore(name, 3)
          .acquire({ timeout: 20 + Math.floor(next() * 200), signal: controller.signal })
          .catch(() => null);
        if (!handle) return;
        granted += 1;
        inside += 1;
        peak = Math.max(peak, inside);
        await pause(Math.floor(next() * 10));
        inside -= 1;
        expect(await handle.release()).toBe(true);
      }),
    );
    expect(granted).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(3);
    const admin = await harness.client();
    const base = advisoryKey('', 'semaphore', name);
    // (A grant that raced a timeout is released by core right after the caller gave up.)
    await waitFor(
      async () => {
        for (let slot = 0; slot < 3; slot++) {
          if ((await advisoryLocks(admin, slotKey(base, slot))).length > 0) return false;
        }
        return true;
      },
      2000,
      'every slot to be free',
    );
  }, 60_000);

  it('a RW lock keeps readers XOR a writer and leaves nothing held or queued', async () => {
    const name = uniqueName('churn-rw');
    const providers = [harness.provider(), harness.provider()];
    const next = random(11);
    let readers = 0;
    let writers = 0;
    let violations = 0;
    await Promise.all(
      Array.from({ length: 60 }, async (_, task) => {
        await pause(Math.floor(next() * 50));
        const lock = providers[task % 2]!.createReadWriteLock(name);
        const write = next() < 0.3;
        const controller = new AbortController();
        if (task % 4 === 0) {
          setTimeout(() => controller.abort(new Error('churn')), Math.floor(next() * 40));
        }
        const options = { timeout: 20 + Math.floor(next() * 200), signal: controller.signal };
        const handle = await (write ? lock.acquireWrite(options) : lock.acquireRead(options)).catch(
          () => null,
        );
        if (!handle) return;
        if (write) writers += 1;
        else readers += 1;
        if (writers > 1 || (writers === 1 && readers > 0)) violations += 1;
        await pause(Math.floor(next() * 5));
        if (write) writers -= 1;
        else readers -= 1;
        expect(await handle.release()).toBe(true);
      }),
    );
    expect(violations).toBe(0);
    const admin = await harness.client();
    await waitFor(
      async () => (await advisoryLocks(admin, advisoryKey('', 'read', name))).length === 0,
      2000,
      'the key to be free and unqueued',
    );
  }, 60_000);
});
