import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findFreePort } from '@lockkit/testkit';
import { createLockProvider } from 'lockkit';
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceInstance } from './service-instance.js';

// Lock errors reach the client as what they mean, not as a 500: the item is busy (423 Locked,
// try again) or the lock server cannot be reached (503).

const scratch = mkdtempSync(join(tmpdir(), 'lockkit-nest-errors-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function stockFile(label: string): string {
  const path = join(scratch, `${label}-stock.json`);
  writeFileSync(path, JSON.stringify({ widget: { stock: 5, lastToken: '0', sales: [] } }));
  return path;
}

const stockLeft = (path: string): number =>
  (JSON.parse(readFileSync(path, 'utf8')) as Record<string, { stock: number }>)['widget']!.stock;

async function purchase(base: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}/inventory/widget/purchase`, { method: 'POST' });
  return { status: response.status, body: await response.json() };
}

describe('lock errors as HTTP answers', () => {
  it('a purchase that cannot get the lock within LOCK_TIMEOUT_MS answers 423 and sells nothing', async () => {
    const lockUrl = pathToFileURL(join(scratch, 'locks')).href;
    const stock = stockFile('busy');
    const [instance, base] = await ServiceInstance.start({
      LOCK_URL: lockUrl,
      STOCK_FILE: stock,
      LOCK_TIMEOUT_MS: '200',
    });
    const locks = await createLockProvider(lockUrl);
    try {
      const held = await locks.createLock('inventory:widget').acquire();
      expect(await purchase(base)).toEqual({
        status: 423,
        body: { sold: false, sku: 'widget', reason: 'busy' },
      });
      expect(stockLeft(stock)).toBe(5);
      expect(await held.release()).toBe(true);
      expect((await purchase(base)).status).toBe(200);
      expect(stockLeft(stock)).toBe(4);
    } finally {
      await locks.close();
      await instance.stop();
    }
  });

  it('a purchase whose lock server cannot be reached answers 503 and sells nothing', async () => {
    const port = await findFreePort(); // nothing listens there
    const stock = stockFile('down');
    const [instance, base] = await ServiceInstance.start({
      LOCK_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
      STOCK_FILE: stock,
      LOCK_TIMEOUT_MS: '200',
    });
    try {
      expect(await purchase(base)).toEqual({
        status: 503,
        body: { sold: false, sku: 'widget', reason: 'lock server unavailable' },
      });
      expect(stockLeft(stock)).toBe(5);
    } finally {
      await instance.stop();
    }
  });
});
