import { setTimeout as pause } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from './app-config.js';
import { ILockProvider } from './lock-provider.token.js';
import { StockStore } from './stock-store.js';

/** The outcome of one purchase. */
export type Purchase =
  | {
      readonly sold: true;
      readonly sku: string;
      readonly left: number;
      readonly fencingToken: string;
    }
  | {
      readonly sold: false;
      readonly sku: string;
      readonly reason: 'sold out' | 'unknown sku' | 'fenced';
    };

/** Sells one item at a time, under the lock `inventory:<sku>`. */
@Injectable()
export class InventoryService {
  constructor(
    @Inject(ILockProvider) private readonly locks: ILockProvider,
    @Inject(StockStore) private readonly store: StockStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  purchase(sku: string): Promise<Purchase> {
    return this.locks.createLock(`inventory:${sku}`).withLock(
      async (handle): Promise<Purchase> => {
        const record = await this.store.read(sku);
        if (!record) return { sold: false, sku, reason: 'unknown sku' };
        if (record.stock === 0) return { sold: false, sku, reason: 'sold out' };
        await pause(this.config.thinkMs, undefined, { signal: handle.signal }); // a real service would call a payment API here
        const write = await this.store.write(sku, handle.fencingToken, (current) => {
          current.stock = record.stock - 1;
          current.sales.push(String(handle.fencingToken));
        });
        if (!write.written) return { sold: false, sku, reason: 'fenced' };
        return {
          sold: true,
          sku,
          left: record.stock - 1,
          fencingToken: String(handle.fencingToken),
        };
      },
      { timeout: this.config.lockTimeoutMs },
    );
  }

  async stock(
    sku: string,
  ): Promise<{ readonly sku: string; readonly stock: number; readonly sold: number } | undefined> {
    const record = await this.store.read(sku);
    return record && { sku, stock: record.stock, sold: record.sales.length };
  }
}
