// A worker process of the inventory demo: `node demo-worker.js <worker> <url> <storePath>`.
// Reports events as JSON lines on stdout.
import { keepAlive } from '../keep-alive.js';
import { createDemoProvider } from './demo-provider.js';
import { buyUntilSoldOut } from './inventory-worker.js';

const [worker = '', url = '', storePath = ''] = process.argv.slice(2);
const provider = await createDemoProvider(url);
const stopKeepingAlive = keepAlive();
try {
  await buyUntilSoldOut(provider, Number(worker), storePath, (event) => {
    process.stdout.write(`${JSON.stringify(event)}\n`);
  });
} finally {
  stopKeepingAlive();
  await provider.close();
}
