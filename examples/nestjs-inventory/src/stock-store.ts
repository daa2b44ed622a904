import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from './app-config.js';

/** One sku's stock and sales. */
export interface StockRecord {
  stock: number;
  /** Largest fencing token accepted for this sku. */
  lastToken: string;
  /** Fencing tokens of the sales, in the order they were written. */
  sales: string[];
}

/** What a fenced write did. */
export type FencedWrite =
  | { readonly written: true }
  | { readonly written: false; readonly lastToken: string };

/**
 * The stock, in a JSON file shared by every instance of the service. Writes are fenced: a
 * write carrying a token older than one already accepted for the sku is refused, so a holder
 * whose lock was lost cannot overwrite newer work.
 */
@Injectable()
export class StockStore {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async read(sku: string): Promise<StockRecord | undefined> {
    return (await this.#load())[sku];
  }

  /** Every sku's record. */
  readAll(): Promise<Readonly<Record<string, StockRecord>>> {
    return this.#load();
  }

  async write(
    sku: string,
    token: bigint,
    update: (record: StockRecord) => void,
  ): Promise<FencedWrite> {
    const all = await this.#load();
    const record = all[sku];
    if (!record) throw new Error(`unknown sku ${sku}`);
    if (token < BigInt(record.lastToken)) return { written: false, lastToken: record.lastToken };
    update(record);
    record.lastToken = String(token);
    const temporary = `${this.config.stockFile}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(all));
    await rename(temporary, this.config.stockFile);
    return { written: true };
  }

  async #load(): Promise<Record<string, StockRecord>> {
    return JSON.parse(await readFile(this.config.stockFile, 'utf8')) as Record<string, StockRecord>;
  }
}
