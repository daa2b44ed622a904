import { type FencingCounter, type InsertResult, quoted, tokenOf } from './fencing-counter.js';
import type { LockConnection, SqlValue, StatementMode } from './lock-connection.js';
import { ER_NO_SUCH_TABLE, errnoOf } from './mysql-errors.js';
import { OnDemand } from './on-demand.js';

/** Tokens per durable reservation: one InnoDB commit per this many grants. */
export const BLOCK_SIZE = 10_000;
/** Refills one draw may need before giving up (concurrent draws can use up a fresh block). */
const maxRefills = 5;

/**
 * The draw: the next number while it is under the ceiling (its value in LAST_INSERT_ID, so in
 * the reply); otherwise 0 there, and the counter moves past the ceiling anyway (the row always
 * changes, so a grant always reports an affected row). A missing row (after a restart) is
 * inserted with no ceiling, so its first draw reports 0 too.
 */
const drawUpdate =
  'ON DUPLICATE KEY UPDATE n = IF(n < ceil, LAST_INSERT_ID(n + 1), n + 1 + LAST_INSERT_ID(0))';

/**
 * `fencing: 'blocks'` (the default): one counter for every lock, kept in a `MEMORY` table
 * (`<fencingTable>_live`: a single row, no disk write per draw), which hands out numbers only
 * up to a ceiling reserved durably in an InnoDB row (`<fencingTable>_blocks`), a block of
 * {@link BLOCK_SIZE} per commit.
 *
 * Why it never rewinds: a token is handed out only while it is at most the live ceiling, and
 * the ceiling is raised only after the reservation that covers it has committed. A restart
 * (or a crash) empties the `MEMORY` table; the next draw finds no ceiling, reserves the next
 * block and resumes above everything reserved before, so above every token handed out. Tokens
 * strictly increase per lock (they increase across all locks) and jump by up to a block after
 * a restart. Crash safety is InnoDB's: as durable as a commit under
 * `innodb_flush_log_at_trx_commit=1`.
 *
 * The first use seeds the reservation from the `'table'` source's counter table
 * (`<fencingTable>`), when it exists, so switching from `'table'` to `'blocks'` keeps tokens
 * increasing (switch every process at once: the two sources do not know each other).
 */
export class FencingBlocks implements FencingCounter {
  readonly #oldTable: string;
  readonly #live: string;
  readonly #blocks: string;
  readonly #drawSql: string;
  readonly #reserveSql: string;
  readonly #raiseSql: string;
  /** The acquire statement per mode and condition (the algorithms use a few fixed ones). */
  readonly #acquireSql = new Map<string, string>();
  readonly #onDemand = new OnDemand(ER_NO_SUCH_TABLE, (connection) => this.#create(connection));

  constructor(table = 'lockkit_fencing_tokens') {
    this.#oldTable = quoted(table);
    this.#live = quoted(`${table}_live`);
    this.#blocks = quoted(`${table}_blocks`);
    this.#drawSql = `INSERT INTO ${this.#live} (id, n, ceil) VALUES (1, LAST_INSERT_ID(0), 0) ${drawUpdate}`;
    this.#reserveSql = `UPDATE ${this.#blocks} SET reserved = LAST_INSERT_ID(reserved + ${BLOCK_SIZE}) WHERE id = 1`;
    // GREATEST: concurrent refills only ever raise the counter and its ceiling.
    this.#raiseSql =
      `INSERT INTO ${this.#live} (id, n, ceil) VALUES (1, ?, ?) ` +
      'ON DUPLICATE KEY UPDATE n = GREATEST(n, ?), ceil = GREATEST(ceil, ?)';
  }

  async acquireAndCount(
    connection: LockConnection,
    _base: string,
    condition: string,
    values: readonly SqlValue[],
    mode: StatementMode,
  ): Promise<bigint | undefined> {
    const key = `${mode} ${condition}`;
    let sql = this.#acquireSql.get(key);
    if (sql === undefined) {
      // A MEMORY table is locked for the whole statement: a GET_LOCK that waits inside the
      // draw would hold up every other draw. A waiting grant draws in a second statement.
      sql =
        mode === 'wait'
          ? `SELECT (${condition}) AS granted`
          : `INSERT INTO ${this.#live} (id, n, ceil) SELECT 1, LAST_INSERT_ID(0), 0 FROM DUAL ` +
            `WHERE (${condition}) = 1 ${drawUpdate}`;
      this.#acquireSql.set(key, sql);
    }
    const statement = sql;
    if (mode === 'wait') {
      type Rows = { granted: number | null }[];
      const rows = await connection.statement<Rows>(mode, statement, values);
      return rows[0]?.granted === 1 ? this.next(connection) : undefined;
    }
    const send = () => connection.statement<InsertResult>(mode, statement, values);
    const result = await this.#onDemand.run(connection, send);
    if (result.affectedRows === 0) return undefined;
    return result.insertId > 0 ? tokenOf(result.insertId) : this.#refillAndDraw(connection);
  }

  async next(connection: LockConnection): Promise<bigint> {
    const send = () => connection.query<InsertResult>(this.#drawSql);
    const result = await this.#onDemand.run(connection, send);
    return result.insertId > 0 ? tokenOf(result.insertId) : this.#refillAndDraw(connection);
  }

  /** The live counter had no number left under its ceiling: reserve a block, draw again. */
  async #refillAndDraw(connection: LockConnection): Promise<bigint> {
    for (let refill = 0; refill < maxRefills; refill++) {
      const reserved = await this.#reserve(connection);
      // Committed: every number up to `ceiling` may now be handed out, and a restart resumes
      // above it.
      const ceiling = BigInt(reserved.insertId);
      const floor = (ceiling - BigInt(BLOCK_SIZE)).toString();
      await connection.query(this.#raiseSql, [floor, `${ceiling}`, floor, `${ceiling}`]);
      const drawn = await connection.query<InsertResult>(this.#drawSql);
      if (drawn.insertId > 0) return tokenOf(drawn.insertId);
    }
    throw new Error(
      `The fencing counter ${this.#live} found no number after ${maxRefills} refills`,
    );
  }

  /**
   * Reserves the next block; resolves its ceiling. Only the seed ever inserts the row (this
   * only updates it), so a reservation can never land before the seed and start below it.
   */
  async #reserve(connection: LockConnection): Promise<InsertResult> {
    const reserve = () => connection.query<InsertResult>(this.#reserveSql);
    const reserved = await this.#onDemand.run(connection, reserve);
    if (reserved.affectedRows > 0) return reserved;
    await this.#onDemand.create(connection);
    return reserve();
  }

  async #create(connection: LockConnection): Promise<void> {
    await connection.query(
      `CREATE TABLE IF NOT EXISTS ${this.#live} (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, ` +
        'n BIGINT UNSIGNED NOT NULL, ceil BIGINT UNSIGNED NOT NULL) ENGINE=MEMORY',
    );
    await connection.query(
      `CREATE TABLE IF NOT EXISTS ${this.#blocks} (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, ` +
        'reserved BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB',
    );
    // Seed: above every token the per-lock counter table handed out, if there is one.
    const seed = `INSERT IGNORE INTO ${this.#blocks} (id, reserved) `;
    try {
      await connection.query(`${seed}SELECT 1, COALESCE(MAX(t), 0) FROM ${this.#oldTable}`);
    } catch (error) {
      if (errnoOf(error) !== ER_NO_SUCH_TABLE) throw error;
      await connection.query(`${seed}VALUES (1, 0)`);
    }
  }
}
