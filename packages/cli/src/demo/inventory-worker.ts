import { setTimeout as pause } from 'node:timers/promises';
import type { ILockProvider } from 'lockkit';
import { readInventory, writeInventory } from './inventory-store.js';

/** Items in stock at the start of the demo. */
export const STOCK = 10;
/** Worker processes (or tasks, on the in-memory backend). */
export const WORKERS = 4;
/** Lease of lease backends in the demo: short, so the stalled worker loses its lock quickly. */
export const LEASE_MS = 2000;

/** What a worker reports to the coordinator. */
export type WorkerEvent =
  | {
      readonly event: 'refused';
      readonly worker: number;
      readonly pid: number;
      readonly token: string;
      readonly lastToken: string;
    }
  | { readonly event: 'done'; readonly worker: number; readonly bought: number };

/**
 * One buyer: read the stock, think, write it back — under the lock "inventory", with the
 * write fenced by the lock's token. Worker 1 stalls once, mid-sale, past its lease (where the
 * backend has leases and other processes), as a GC pause or a frozen VM would.
 */
export async function buyUntilSoldOut(
  provider: ILockProvider,
  worker: number,
  storePath: string,
  report: (event: WorkerEvent) => void,
): Promise<number> {
  const { leases, crossProcess } = provider.capabilities;
  const lock = provider.createLock('inventory');
  let bought = 0;
  let stalled = false;
  for (;;) {
    const outcome = await lock.withLock(async (handle) => {
      const left = readInventory(storePath).stock;
      if (left === 0) return 'sold out';
      await pause(1 + Math.random() * 3); // the others queue up meanwhile
      if (worker === 1 && !stalled && leases && crossProcess) {
        stalled = true; // no timer can run: the lease is not extended
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LEASE_MS + 500);
      }
      const write = writeInventory(storePath, handle.fencingToken, (inventory) => {
        inventory.stock = left - 1;
        inventory.sales.push({
          item: STOCK - left + 1,
          worker,
          pid: process.pid,
          token: handle.fencingToken,
        });
      });
      if (write.refused) {
        report({
          event: 'refused',
          worker,
          pid: process.pid,
          token: String(handle.fencingToken),
          lastToken: String(write.lastToken),
        });
        return 'refused';
      }
      return 'sold';
    });
    if (outcome === 'sold out') {
      report({ event: 'done', worker, bought });
      return bought;
    }
    if (outcome === 'sold') bought += 1;
    await pause(Math.random() * 3);
  }
}
