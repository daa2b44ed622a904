#!/usr/bin/env node
// The inventory demo: workers compete to buy from a stock of 10 items guarded by a lock.
// Exactly 10 are sold — no oversell — and every sale is stamped with the fencing token of
// the lock that protected it. The store itself refuses a write whose token is older than
// the newest it has seen, which is how a fencing token protects a resource.
//
//   pnpm demo            (in-memory provider: no server needed)
import { createMemoryLockProvider } from '@lockkit/core';

const WORKERS = 8;
const STOCK = 10;

/** The protected resource: it accepts a write only with a token ≥ the last one it saw. */
class Store {
  stock = STOCK;
  sales = [];
  lastToken = 0n;
  write(token, update) {
    if (token < this.lastToken) throw new Error(`stale token ${token} < ${this.lastToken}: write refused`);
    this.lastToken = token;
    update(this);
  }
}

const store = new Store();
const provider = createMemoryLockProvider();
const lock = provider.createLock('inventory');
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function worker(id) {
  let bought = 0;
  for (;;) {
    const sold = await lock.withLock(async (handle) => {
      const left = store.stock; // read …
      if (left === 0) return false;
      await pause(1 + Math.random() * 3); // … think (other workers queue up meanwhile) …
      store.write(handle.fencingToken, (s) => {
        s.stock = left - 1; // … write: safe only because we hold the lock
        s.sales.push({ worker: id, item: STOCK - left + 1, token: handle.fencingToken });
      });
      return true;
    });
    if (!sold) return bought;
    bought += 1;
    await pause(Math.random() * 3);
  }
}

const results = await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i + 1)));
await provider.close();

console.log(`lockkit inventory demo — ${WORKERS} workers, ${STOCK} items, backend: ${provider.backend}\n`);
console.log('item  worker  fencing token');
for (const sale of store.sales) {
  console.log(`${String(sale.item).padStart(4)}  ${String(sale.worker).padStart(6)}  ${String(sale.token).padStart(13)}`);
}
const sold = store.sales.length;
const tokens = store.sales.map((sale) => sale.token);
const increasing = tokens.every((token, i) => i === 0 || token > tokens[i - 1]);
console.log(`\nsold ${sold} of ${STOCK}; stock left ${store.stock}; per worker: ${results.join(' ')}`);
console.log(`tokens strictly increasing: ${increasing ? 'yes' : 'NO'}`);
if (sold !== STOCK || store.stock !== 0 || !increasing) {
  console.error('FAILED: oversold, undersold or out-of-order tokens');
  process.exit(1);
}
console.log('OK: exactly 10 sold, no oversell');
