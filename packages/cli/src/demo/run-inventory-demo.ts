import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { redactUrl } from 'lockkit';
import type { Output } from '../output.js';
import { createDemoProvider, normalizeDemoUrl } from './demo-provider.js';
import { createInventory, readInventory } from './inventory-store.js';
import { buyUntilSoldOut, LEASE_MS, STOCK, WORKERS, type WorkerEvent } from './inventory-worker.js';

const workerScript = fileURLToPath(new URL('./demo-worker.js', import.meta.url));

/**
 * The inventory demo: {@link WORKERS} processes (tasks, on `memory:`) buy from a stock of
 * {@link STOCK} under the lock "inventory" on `url` (default: a file lock directory in a
 * temporary folder) and the report is printed on `output`. Resolves to 0 when exactly
 * {@link STOCK} items were sold with strictly increasing tokens, 1 otherwise.
 */
export async function runInventoryDemo(url: string | undefined, output: Output): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), 'lockkit-demo-'));
  try {
    const lockUrl = normalizeDemoUrl(url ?? pathToFileURL(join(scratch, 'locks')).href);
    const storePath = join(scratch, 'stock.json');
    createInventory(storePath, STOCK);
    const events: WorkerEvent[] = [];
    const backend = await runWorkers(lockUrl, storePath, events);
    return printReport(lockUrl, backend, storePath, events, output);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function runWorkers(url: string, storePath: string, events: WorkerEvent[]): Promise<string> {
  const probe = await createDemoProvider(url);
  if (!probe.capabilities.crossProcess) {
    // Locks visible to one process only: the workers are tasks of this one.
    try {
      await Promise.all(
        Array.from({ length: WORKERS }, (_, index) =>
          buyUntilSoldOut(probe, index + 1, storePath, (event) => events.push(event)),
        ),
      );
      return probe.backend;
    } finally {
      await probe.close();
    }
  }
  const backend = probe.backend;
  try {
    // Reach the server once here, so that a server that is down is one error of this process
    // (exit 69), not one from every worker.
    const handle = await probe.createLock('inventory').tryAcquire({ timeout: 0 });
    await handle?.release();
  } finally {
    await probe.close();
  }
  const workers: ChildProcess[] = [];
  let ready = 0;
  const exits = await Promise.allSettled(
    Array.from({ length: WORKERS }, async (_, index) => {
      const worker = spawn(process.execPath, [workerScript, String(index + 1), url, storePath], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      workers.push(worker);
      let buffered = '';
      worker.stdout.setEncoding('utf8');
      worker.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
          const event = JSON.parse(buffered.slice(0, end)) as WorkerEvent | { event: 'ready' };
          buffered = buffered.slice(end + 1);
          if (event.event !== 'ready') events.push(event);
          // Start everyone together once all are up.
          else if (++ready === WORKERS) for (const each of workers) each.stdin?.end('go\n');
        }
      });
      const [code] = (await once(worker, 'exit')) as [number | null];
      if (code !== 0) throw new Error(`demo worker ${index + 1} exited with code ${code}`);
    }),
  );
  // Every worker has exited by now (so the scratch directory can go); report the first failure.
  const failed = exits.find((exit) => exit.status === 'rejected');
  if (failed) throw failed.reason;
  return backend;
}

function printReport(
  url: string,
  backend: string,
  storePath: string,
  events: readonly WorkerEvent[],
  output: Output,
): number {
  const inventory = readInventory(storePath);
  const where = url.startsWith('file:') ? ` (${fileURLToPath(url.replace(/\?.*$/, ''))})` : '';
  const shown = backend === 'file' || backend === 'memory' ? '' : ` at ${redactUrl(url)}`;
  output.print(
    `lockkit inventory demo — backend: ${backend}${where}${shown}, ${WORKERS} workers, ${STOCK} items\n`,
  );
  output.print('item  worker  pid      fencing token');
  for (const sale of inventory.sales) {
    output.print(
      `${String(sale.item).padStart(4)}  ${String(sale.worker).padStart(6)}  ${String(sale.pid).padEnd(7)}  ${String(sale.token).padStart(13)}`,
    );
  }
  for (const event of events) {
    if (event.event !== 'refused') continue;
    output.print(
      `\nrefused: worker ${event.worker} stalled past its ${LEASE_MS} ms lease holding token ${event.token}; ` +
        `another worker took the lock over and the store had already seen token ${event.lastToken}, so the late write was rejected.`,
    );
  }
  const tokens = inventory.sales.map((sale) => sale.token);
  const increasing = tokens.every(
    (token, index) => index === 0 || token > (tokens[index - 1] ?? 0n),
  );
  const perWorker = events
    .flatMap((event) => (event.event === 'done' ? [event] : []))
    .sort((a, b) => a.worker - b.worker)
    .map((event) => `#${event.worker} ${event.bought}`);
  output.print(
    `\nsold ${inventory.sales.length} of ${STOCK}; stock left ${inventory.stock}; per worker: ${perWorker.join(', ')}`,
  );
  output.print(`tokens strictly increasing: ${increasing ? 'yes' : 'NO'}`);
  if (inventory.sales.length !== STOCK || inventory.stock !== 0 || !increasing) {
    output.say('FAILED: oversold, undersold or out-of-order tokens');
    return 1;
  }
  output.print(`OK: exactly ${STOCK} sold, no oversell`);
  return 0;
}
