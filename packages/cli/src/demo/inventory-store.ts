import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/** One sale, stamped with the fencing token of the lock that protected it. */
export interface Sale {
  readonly item: number;
  readonly worker: number;
  readonly pid: number;
  readonly token: bigint;
}

/** The protected resource: a stock count and its sales, in a JSON file. */
export interface Inventory {
  stock: number;
  /** The largest fencing token the store has accepted. */
  lastToken: bigint;
  sales: Sale[];
}

/** What {@link writeInventory} did. */
export type WriteResult =
  | { readonly refused: false }
  | { readonly refused: true; readonly lastToken: bigint };

/** Creates the store with `stock` items and no sales. */
export function createInventory(path: string, stock: number): void {
  writeFileSync(path, JSON.stringify({ stock, lastToken: '0', sales: [] }));
}

/** Reads the store. */
export function readInventory(path: string): Inventory {
  return JSON.parse(readFileSync(path, 'utf8'), (key, value: unknown) =>
    (key === 'lastToken' || key === 'token') && typeof value === 'string' ? BigInt(value) : value,
  ) as Inventory;
}

/**
 * Applies `update` unless `token` is older than the newest token the store has accepted:
 * the check a fenced resource makes, so a writer whose lock was taken over cannot overwrite
 * the newer holder's work. The file is replaced atomically (readers see old or new).
 */
export function writeInventory(
  path: string,
  token: bigint,
  update: (inventory: Inventory) => void,
): WriteResult {
  const inventory = readInventory(path);
  if (token < inventory.lastToken) return { refused: true, lastToken: inventory.lastToken };
  update(inventory);
  inventory.lastToken = token;
  const json = JSON.stringify(
    inventory,
    (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value),
    2,
  );
  writeFileSync(`${path}.tmp`, json);
  renameSync(`${path}.tmp`, path);
  return { refused: false };
}
