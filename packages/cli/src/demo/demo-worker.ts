// A worker process of the inventory demo: `node demo-worker.js <worker> <url> <storePath>`.
// Reports events as JSON lines on stdout; starts buying when a line arrives on stdin (so that
// all workers start together, whatever their start-up time).
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { keepAlive } from '../keep-alive.js';
import { createDemoProvider } from './demo-provider.js';
import { buyUntilSoldOut } from './inventory-worker.js';

const [worker = '', url = '', storePath = ''] = process.argv.slice(2);
const provider = await createDemoProvider(url);
const stopKeepingAlive = keepAlive();
try {
  process.stdout.write(`${JSON.stringify({ event: 'ready', worker: Number(worker) })}\n`);
  const lines = createInterface({ input: process.stdin });
  await once(lines, 'line');
  lines.close();
  await buyUntilSoldOut(provider, Number(worker), storePath, (event) => {
    process.stdout.write(`${JSON.stringify(event)}\n`);
  });
} catch (error) {
  // One line, not a stack trace: the demo's own process reports that this worker failed.
  process.stderr.write(
    `lockkit: demo worker ${worker}: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exitCode = 1;
} finally {
  stopKeepingAlive();
  await provider.close();
}
