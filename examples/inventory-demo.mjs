#!/usr/bin/env node
// The inventory demo: worker PROCESSES compete to buy from a stock of 10 items kept in a JSON
// file and guarded by a lock. Exactly 10 are sold — no oversell — and every sale is stamped
// with the fencing token of the lock that protected it. The stock file itself refuses a write
// whose token is older than the newest it has seen: one worker stalls past its lease on
// purpose, another takes the lock over, and the stalled worker's late write is refused.
//
//   pnpm demo                                  file backend in a temporary directory
//   node examples/inventory-demo.mjs file:///tmp/my-locks
//   node examples/inventory-demo.mjs memory    one process, in-memory provider
//   node examples/inventory-demo.mjs redis://127.0.0.1:6379   (any URL the `lockkit` meta
//                                              package understands, once it is installed)
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const WORKERS = 4;
const STOCK = 10;
const LEASE_MS = 1000; // short, so the stalled worker's lease runs out quickly
const here = dirname(fileURLToPath(import.meta.url));
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------
// The protected resource: a JSON file that only accepts writes with a token ≥ the last one.

function readStore(path) {
  return JSON.parse(readFileSync(path, 'utf8'), (key, value) =>
    key === 'lastToken' || key === 'token' ? BigInt(value) : value,
  );
}

/** Applies `update` to the store unless `token` is older than the last token it saw. */
function writeStore(path, token, update) {
  const store = readStore(path);
  if (token < store.lastToken) return { refused: true, lastToken: store.lastToken };
  update(store);
  store.lastToken = token;
  const json = JSON.stringify(
    store,
    (_key, value) => (typeof value === 'bigint' ? String(value) : value),
    2,
  );
  writeFileSync(`${path}.tmp`, json);
  renameSync(`${path}.tmp`, path); // atomic replace: readers see the old or the new file
  return { refused: false };
}

// ---------------------------------------------------------------------------------------
// A worker: buy until the stock is gone. Worker 1 stalls once, mid-sale, past its lease.

async function work(provider, id, storePath, log) {
  // Stalling past a lease only makes sense where locks are leases held by separate processes.
  const { leases, crossProcess } = provider.capabilities;
  const lock = provider.createLock('inventory');
  let bought = 0;
  let stalled = false;
  for (;;) {
    const outcome = await lock.withLock(async (handle) => {
      const left = readStore(storePath).stock; // read …
      if (left === 0) return 'sold out';
      await pause(1 + Math.random() * 3); // … think (the others queue up meanwhile) …
      if (id === 1 && !stalled && leases && crossProcess) {
        stalled = true; // a GC pause, a swapped-out VM, a debugger: no heartbeat can run
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LEASE_MS + 500);
      }
      const write = writeStore(storePath, handle.fencingToken, (store) => {
        store.stock = left - 1; // … write: safe only because the token is current
        store.sales.push({
          item: STOCK - left + 1,
          worker: id,
          pid: process.pid,
          token: handle.fencingToken,
        });
      });
      if (write.refused) {
        log({
          event: 'refused',
          worker: id,
          pid: process.pid,
          token: String(handle.fencingToken),
          lastToken: String(write.lastToken),
        });
        return 'refused';
      }
      return 'sold';
    });
    if (outcome === 'sold out') {
      log({ event: 'done', worker: id, bought });
      return bought;
    }
    if (outcome === 'sold') bought += 1;
    await pause(Math.random() * 3);
  }
}

// ---------------------------------------------------------------------------------------
// Providers: the file backend (default), the in-memory one, or the `lockkit` meta package.

async function fileBackend() {
  const dist = join(here, '../packages/file/dist/index.js');
  const src = join(here, '../packages/file/src');
  const newest = Math.max(...readdirSync(src).map((name) => statSync(join(src, name)).mtimeMs));
  if (!existsSync(dist) || statSync(dist).mtimeMs < newest) {
    execFileSync('pnpm', ['--silent', '--filter', '@lockkit/file', 'build'], {
      stdio: 'inherit',
      cwd: join(here, '..'),
    });
  }
  return import(pathToFileURL(dist).href);
}

async function createProvider(url) {
  if (url === 'memory' || url === 'memory:') {
    const { createMemoryLockProvider } = await import('@lockkit/core');
    return createMemoryLockProvider();
  }
  if (url.startsWith('file:')) {
    const { createFileLockProvider } = await fileBackend();
    return createFileLockProvider({ directory: new URL(url), leaseMs: LEASE_MS });
  }
  let meta;
  try {
    meta = await import('lockkit');
  } catch {
    throw new Error(
      `"${url}" needs the lockkit meta package (not installed yet): try file:… or memory`,
    );
  }
  return meta.createLockProvider(url);
}

// ---------------------------------------------------------------------------------------
// Worker process entry: `node inventory-demo.mjs --worker <id> <url> <storePath>`.

if (process.argv[2] === '--worker') {
  const [, , , id, url, storePath] = process.argv;
  const provider = await createProvider(url);
  const log = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  await work(provider, Number(id), storePath, log);
  await provider.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------
// Coordinator: set up the store, run the workers, print the report.

const scratch = mkdtempSync(join(tmpdir(), 'lockkit-demo-'));
const url = process.argv[2] ?? pathToFileURL(join(scratch, 'locks')).href;
const storePath = join(scratch, 'stock.json');
writeFileSync(storePath, JSON.stringify({ stock: STOCK, lastToken: '0', sales: [] }));
const events = [];
let backend;
try {
  if (url === 'memory' || url === 'memory:') {
    // In-memory locks are visible to one process only: run the workers as tasks.
    const provider = await createProvider(url);
    backend = provider.backend;
    await Promise.all(
      Array.from({ length: WORKERS }, (_, i) =>
        work(provider, i + 1, storePath, (m) => events.push(m)),
      ),
    );
    await provider.close();
  } else {
    const probe = await createProvider(url);
    backend = probe.backend;
    await probe.close();
    const workers = Array.from({ length: WORKERS }, (_, i) => {
      const child = spawn(
        process.execPath,
        [fileURLToPath(import.meta.url), '--worker', String(i + 1), url, storePath],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let buffered = '';
      child.stdout.on('data', (chunk) => {
        buffered += chunk;
        for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
          events.push(JSON.parse(buffered.slice(0, end)));
          buffered = buffered.slice(end + 1);
        }
      });
      return once(child, 'exit').then(([code]) => {
        if (code !== 0) throw new Error(`worker ${i + 1} exited with code ${code}`);
      });
    });
    await Promise.all(workers);
  }

  const store = readStore(storePath);
  const where = url.startsWith('file:') ? ` (${fileURLToPath(url)})` : '';
  console.log(
    `lockkit inventory demo — backend: ${backend}${where}, ${WORKERS} workers, ${STOCK} items\n`,
  );
  console.log('item  worker  pid      fencing token');
  for (const sale of store.sales) {
    console.log(
      `${String(sale.item).padStart(4)}  ${String(sale.worker).padStart(6)}  ${String(sale.pid).padEnd(7)}  ${String(sale.token).padStart(13)}`,
    );
  }
  for (const refused of events.filter((event) => event.event === 'refused')) {
    console.log(
      `\nrefused: worker ${refused.worker} stalled past its ${LEASE_MS} ms lease holding token ${refused.token}; ` +
        `another worker took the lock over and the store had already seen token ${refused.lastToken}, so the late write was rejected.`,
    );
  }
  const tokens = store.sales.map((sale) => sale.token);
  const increasing = tokens.every((token, i) => i === 0 || token > tokens[i - 1]);
  const perWorker = events
    .filter((event) => event.event === 'done')
    .sort((a, b) => a.worker - b.worker);
  console.log(
    `\nsold ${store.sales.length} of ${STOCK}; stock left ${store.stock}; per worker: ${perWorker.map((w) => `#${w.worker} ${w.bought}`).join(', ')}`,
  );
  console.log(`tokens strictly increasing: ${increasing ? 'yes' : 'NO'}`);
  if (store.sales.length !== STOCK || store.stock !== 0 || !increasing) {
    console.error('FAILED: oversold, undersold or out-of-order tokens');
    process.exitCode = 1;
  } else {
    console.log(`OK: exactly ${STOCK} sold, no oversell`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
