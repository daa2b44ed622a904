import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ServiceInstance } from './service-instance.js';

// The same HTTP load on two instances of the service, on different lock backends chosen by
// LOCK_URL alone: exactly STOCK purchases succeed, the stock ends at zero, and the sales were
// written with strictly increasing fencing tokens.

const STOCK = 20;
const REQUESTS = 60;
const scratch = mkdtempSync(join(tmpdir(), 'lockkit-nest-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Outcome {
  readonly status: number;
  readonly body: {
    readonly sold: boolean;
    readonly reason?: string;
    readonly fencingToken?: string;
  };
}

interface StockRecord {
  readonly stock: number;
  readonly sales: readonly string[];
}

/** Runs the load against two instances configured with `lockUrl`; returns what happened. */
async function sellOut(label: string, lockUrl: string, thinkMs = 5) {
  const stockFile = join(scratch, `${label}-stock.json`);
  writeFileSync(stockFile, JSON.stringify({ widget: { stock: STOCK, lastToken: '0', sales: [] } }));
  const env = { LOCK_URL: lockUrl, STOCK_FILE: stockFile, THINK_MS: String(thinkMs) };
  const instances = await Promise.all([ServiceInstance.start(env), ServiceInstance.start(env)]);
  try {
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, index): Promise<Outcome> => {
        const [, base] = instances[index % instances.length]!;
        const response = await fetch(`${base}/inventory/widget/purchase`, { method: 'POST' });
        return { status: response.status, body: (await response.json()) as Outcome['body'] };
      }),
    );
    const views = await Promise.all(
      instances.map(async ([, base]) => (await fetch(`${base}/inventory/widget`)).json()),
    );
    const store = (JSON.parse(readFileSync(stockFile, 'utf8')) as Record<string, StockRecord>)[
      'widget'
    ]!;
    return { outcomes, views, store };
  } finally {
    await Promise.all(instances.map(([instance]) => instance.stop()));
  }
}

const backends: readonly (readonly [string, () => string])[] = [
  ['file', () => pathToFileURL(join(scratch, 'locks')).href],
  [
    'postgres',
    () => {
      const url = inject('lockkitServers').postgresUrl;
      if (!url) throw new Error('the global setup started no PostgreSQL');
      return url;
    },
  ],
];

describe('two service instances under concurrent purchases', () => {
  it.each(backends)(`%s: exactly ${STOCK} sold, no oversell`, async (label, lockUrl) => {
    const { outcomes, views, store } = await sellOut(label, lockUrl());
    const sold = outcomes.filter((outcome) => outcome.status === 200);
    expect(sold).toHaveLength(STOCK);
    expect(outcomes.filter((outcome) => outcome.status === 409)).toHaveLength(REQUESTS - STOCK);
    expect(
      outcomes.every((outcome) => outcome.status === 200 || outcome.body.reason === 'sold out'),
    ).toBe(true);
    expect(store.stock).toBe(0);
    expect(store.sales).toHaveLength(STOCK);
    const tokens = store.sales.map(BigInt);
    expect(tokens.every((token, index) => index === 0 || token > tokens[index - 1]!)).toBe(true);
    expect(new Set(sold.map((outcome) => outcome.body.fencingToken)).size).toBe(STOCK);
    expect(views).toEqual([
      { sku: 'widget', stock: 0, sold: STOCK },
      { sku: 'widget', stock: 0, sold: STOCK },
    ]);
  });

  it('the load catches a lock that does not span processes (memory: is per process)', async () => {
    // A longer think time keeps both instances selling at once, so they must collide.
    const { outcomes, store } = await sellOut('memory', 'memory:', 20);
    const sold = outcomes.filter((outcome) => outcome.status === 200).length;
    const fenced = outcomes.filter((outcome) => outcome.body.reason === 'fenced').length;
    const clean = sold === STOCK && fenced === 0 && store.sales.length === STOCK - store.stock;
    // Without cross-process exclusion, the two instances overwrite each other's stock
    // (lost updates: more sales than stock sold) or the fencing check refuses stale writes.
    expect(clean).toBe(false);
  });
});
