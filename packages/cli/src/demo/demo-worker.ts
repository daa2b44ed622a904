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
} finally {
  stopKeepingAlive();
  await provider.close();
}
