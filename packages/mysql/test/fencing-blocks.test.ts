import { describe, expect, it } from 'vitest';
import { BLOCK_SIZE } from '../src/fencing-blocks.js';
import { adminQuery, provider, uniqueName } from './support.js';

const fresh = (label: string) => `${label}_${Math.random().toString(36).slice(2, 10)}`;

async function engineOf(table: string): Promise<string | undefined> {
  const rows = await adminQuery<{ engine: string }[]>(
    'SELECT ENGINE AS engine FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    [table],
  );
  return rows[0]?.engine;
}

async function reservedOf(table: string): Promise<number> {
  const rows = await adminQuery<{ reserved: number }[]>(
    `SELECT reserved FROM \`${table}_blocks\` WHERE id = 1`,
  );
  return Number(rows[0]?.reserved);
}

/** Takes and releases each lock in turn on `locks`; resolves the tokens. */
async function tokens(
  locks: ReturnType<typeof provider>,
  names: readonly string[],
): Promise<bigint[]> {
  const drawn: bigint[] = [];
  for (const name of names) {
    const handle = await locks.createLock(name).acquire();
    drawn.push(handle.fencingToken);
    await handle.release();
  }
  return drawn;
}

async function drop(table: string): Promise<void> {
  await adminQuery(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_live\`, \`${table}_blocks\``);
}

describe("fencing: 'blocks' (the default)", () => {
  it('draws one increasing counter for all locks from a MEMORY row, reserving 10,000 per InnoDB commit', async () => {
    const table = fresh('blocks');
    const [a, b] = [uniqueName('blocks-a'), uniqueName('blocks-b')];
    expect(await tokens(provider({ fencingTable: table }), [a, b, a])).toEqual([1n, 2n, 3n]);
    expect(await engineOf(`${table}_live`)).toBe('MEMORY');
    expect(await engineOf(`${table}_blocks`)).toBe('InnoDB');
    expect(await engineOf(table)).toBeUndefined();
    expect(await reservedOf(table)).toBe(BLOCK_SIZE);
    // Hold records need no durability either (no hold outlives a restart).
    expect(await engineOf('lockkit_holds')).toBe('Aria');
    await drop(table);
  });

  it('a used-up block reserves the next one; tokens go on increasing, waiting grants included', async () => {
    const table = fresh('blocks');
    const locks = provider({ fencingTable: table });
    const name = uniqueName('blocks-full');
    await tokens(locks, [name]);
    await adminQuery(`UPDATE \`${table}_live\` SET n = ceil - 1`);
    expect(await tokens(locks, [name])).toEqual([BigInt(BLOCK_SIZE)]);
    // The next grant is a waiting one (GET_LOCK waits on the server), past the ceiling.
    const held = await locks.createLock(name).acquire();
    const waiting = provider({ fencingTable: table }).createLock(name).acquire({ timeout: 10_000 });
    await held.release();
    const handle = await waiting;
    // The draw that found the block used up moved the counter past it (a gap, never a repeat).
    expect(held.fencingToken).toBe(BigInt(BLOCK_SIZE + 2));
    expect(handle.fencingToken).toBe(BigInt(BLOCK_SIZE + 3));
    await handle.release();
    expect(await reservedOf(table)).toBe(2 * BLOCK_SIZE);
    await drop(table);
  });

  it('an emptied MEMORY row (what a restart or crash leaves) resumes above the last reservation, under concurrency', async () => {
    const table = fresh('blocks');
    const names = Array.from({ length: 8 }, (_, i) => uniqueName(`blocks-restart-${i}`));
    const before = await tokens(provider({ fencingTable: table }), names.slice(0, 3));
    expect(before).toEqual([1n, 2n, 3n]);
    await adminQuery(`DELETE FROM \`${table}_live\``);
    // Eight sessions find the row gone at once: every one refills, none hands out a number twice.
    const after = await Promise.all(
      names.map(async (name) => (await tokens(provider({ fencingTable: table }), [name]))[0]!),
    );
    expect(new Set(after).size).toBe(after.length);
    for (const token of after) expect(token).toBeGreaterThan(BigInt(BLOCK_SIZE));
    expect(await reservedOf(table)).toBeGreaterThanOrEqual(2 * BLOCK_SIZE);
    await drop(table);
  });

  it("seeds its first reservation from the 'table' counter, so switching to it never rewinds", async () => {
    const table = fresh('blocks');
    const name = uniqueName('blocks-seed');
    expect(await tokens(provider({ fencing: 'table', fencingTable: table }), [name, name])).toEqual(
      [1n, 2n],
    );
    await adminQuery(`UPDATE \`${table}\` SET t = 12345`);
    const [token] = await tokens(provider({ fencingTable: table }), [name]);
    expect(token).toBe(12346n);
    expect(await reservedOf(table)).toBe(12345 + BLOCK_SIZE);
    await drop(table);
  });

  it('a reservation never lands before the seed (tables made, seed row not yet written)', async () => {
    const table = fresh('blocks');
    await adminQuery(`CREATE TABLE \`${table}\` (k VARBINARY(64) PRIMARY KEY, t BIGINT UNSIGNED)`);
    await adminQuery(`INSERT INTO \`${table}\` VALUES ('x', 500)`);
    // What another client's creation looks like between its CREATE TABLEs and its seed.
    await adminQuery(
      `CREATE TABLE \`${table}_live\` (id TINYINT UNSIGNED PRIMARY KEY, n BIGINT UNSIGNED NOT NULL, ceil BIGINT UNSIGNED NOT NULL) ENGINE=MEMORY`,
    );
    await adminQuery(
      `CREATE TABLE \`${table}_blocks\` (id TINYINT UNSIGNED PRIMARY KEY, reserved BIGINT UNSIGNED NOT NULL)`,
    );
    const [token] = await tokens(provider({ fencingTable: table }), [uniqueName('blocks-race')]);
    expect(token).toBe(501n);
    await drop(table);
  });

  it('rejects a fencing source it does not know, before any I/O', () => {
    expect(() => provider({ fencing: 'memory' as never })).toThrow(
      "`fencing` must be 'blocks', 'auto', 'table' or 'sequence'",
    );
  });
});
