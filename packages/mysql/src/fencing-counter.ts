import type { LockConnection, SqlValue, StatementMode } from './lock-connection.js';
import { ER_NO_SUCH_TABLE, ER_UNKNOWN_SEQUENCES } from './mysql-errors.js';
import { OnDemand } from './on-demand.js';

/** Where fencing tokens come from. */
export interface FencingCounter {
  /**
   * One statement that evaluates `condition` (SQL, typically a `GET_LOCK`) once and, only if
   * it is 1, draws a token: the grant and its token arrive together. Resolves the token, or
   * undefined when the condition was not 1. `mode`: `'try'` for a condition that never
   * blocks, `'wait'` for one that may (see {@link StatementMode}).
   */
  acquireAndCount(
    connection: LockConnection,
    base: string,
    condition: string,
    values: readonly SqlValue[],
    mode: StatementMode,
  ): Promise<bigint | undefined>;
  /** Draws a token for `base` (after a grant made by another statement). */
  next(connection: LockConnection, base: string): Promise<bigint>;
}

export interface InsertResult {
  readonly affectedRows: number;
  readonly insertId: number;
}

export function quoted(name: string): string {
  return name
    .split('.')
    .map((part) => `\`${part}\``)
    .join('.');
}

/**
 * A counter table (`fencing: 'table'`, the default), one row per lock base, bumped by
 * `INSERT … ON DUPLICATE KEY UPDATE t = LAST_INSERT_ID(t + 1)` and never deleted. Tokens count
 * 1, 2, 3, … per lock, across holders, releases, kills and server restarts (the row is as
 * durable as the server's InnoDB commits). Works on MySQL and MariaDB; costs a write per grant.
 */
export class FencingTable implements FencingCounter {
  readonly #table: string;
  readonly #onDemand: OnDemand;
  /** The acquire statement per condition (the algorithms use a few fixed ones). */
  readonly #acquireSql = new Map<string, string>();
  readonly #nextSql: string;

  constructor(table = 'lockkit_fencing_tokens') {
    this.#table = quoted(table);
    this.#onDemand = new OnDemand(
      ER_NO_SUCH_TABLE,
      `CREATE TABLE IF NOT EXISTS ${this.#table} (` +
        'k VARBINARY(64) NOT NULL PRIMARY KEY, t BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB',
    );
    this.#nextSql =
      `INSERT INTO ${this.#table} (k, t) VALUES (?, LAST_INSERT_ID(1)) ` +
      'ON DUPLICATE KEY UPDATE t = LAST_INSERT_ID(t + 1)';
  }

  async acquireAndCount(
    connection: LockConnection,
    base: string,
    condition: string,
    values: readonly SqlValue[],
    mode: StatementMode,
  ): Promise<bigint | undefined> {
    let sql = this.#acquireSql.get(condition);
    if (sql === undefined) {
      sql =
        `INSERT INTO ${this.#table} (k, t) SELECT ?, LAST_INSERT_ID(1) FROM DUAL WHERE (${condition}) = 1 ` +
        'ON DUPLICATE KEY UPDATE t = LAST_INSERT_ID(t + 1)';
      this.#acquireSql.set(condition, sql);
    }
    const statement = sql;
    const bound = [base, ...values];
    const send = () => connection.statement<InsertResult>(mode, statement, bound);
    const result = await this.#onDemand.run(connection, send);
    return result.affectedRows > 0 ? tokenOf(result.insertId) : undefined;
  }

  async next(connection: LockConnection, base: string): Promise<bigint> {
    const send = () => connection.query<InsertResult>(this.#nextSql, [base]);
    const result = await this.#onDemand.run(connection, send);
    return tokenOf(result.insertId);
  }
}

/**
 * MariaDB only (`fencing: 'sequence'`, opt-in): one `SEQUENCE` (cached, so most draws write
 * nothing) shared by every lock. Tokens strictly increase per lock (they increase globally)
 * across graceful restarts, which skip the rest of the cached block; not across a server
 * crash: MariaDB puts a sequence's new value on disk some time after `NEXTVAL` returned it, so
 * values drawn just before a crash can be drawn again (seen in `pnpm chaos`).
 */
export class FencingSequence implements FencingCounter {
  readonly #sequence: string;
  readonly #onDemand: OnDemand;
  /** The acquire statement per condition (the algorithms use a few fixed ones). */
  readonly #acquireSql = new Map<string, string>();

  constructor(sequence = 'lockkit_fencing_sequence') {
    this.#sequence = quoted(sequence);
    this.#onDemand = new OnDemand(
      ER_UNKNOWN_SEQUENCES,
      `CREATE SEQUENCE IF NOT EXISTS ${this.#sequence} CACHE 1000`,
    );
  }

  async acquireAndCount(
    connection: LockConnection,
    _base: string,
    condition: string,
    values: readonly SqlValue[],
    mode: StatementMode,
  ): Promise<bigint | undefined> {
    let sql = this.#acquireSql.get(condition);
    if (sql === undefined) {
      sql = `SELECT IF((${condition}) = 1, NEXTVAL(${this.#sequence}), NULL) AS token`;
      this.#acquireSql.set(condition, sql);
    }
    const statement = sql;
    type Rows = { token: number | string | null }[];
    const send = () => connection.statement<Rows>(mode, statement, values);
    const rows = await this.#onDemand.run(connection, send);
    const token = rows[0]?.token;
    return token == null ? undefined : tokenOf(token);
  }

  async next(connection: LockConnection): Promise<bigint> {
    const send = () =>
      connection.query<{ token: number | string }[]>(`SELECT NEXTVAL(${this.#sequence}) AS token`);
    const rows = await this.#onDemand.run(connection, send);
    return tokenOf(rows[0]?.token ?? 0);
  }
}

/**
 * `fencing: 'auto'`: the sequence on a MariaDB session that has sequences (10.3+), the table
 * on any other server. Every session of a provider talks to the same server, so one provider
 * (and every provider on that server) always draws from the same source.
 */
export class FencingByServer implements FencingCounter {
  readonly #table: FencingTable;
  readonly #sequence: FencingSequence;

  constructor(name: string | undefined) {
    this.#table = new FencingTable(name);
    this.#sequence = new FencingSequence(name);
  }

  acquireAndCount(
    connection: LockConnection,
    base: string,
    condition: string,
    values: readonly SqlValue[],
    mode: StatementMode,
  ): Promise<bigint | undefined> {
    return this.#of(connection).acquireAndCount(connection, base, condition, values, mode);
  }

  next(connection: LockConnection, base: string): Promise<bigint> {
    return this.#of(connection).next(connection, base);
  }

  #of(connection: LockConnection): FencingCounter {
    return connection.sequences ? this.#sequence : this.#table;
  }
}

export function tokenOf(value: number | string): bigint {
  const token = BigInt(value);
  if (token <= 0n || (typeof value === 'number' && !Number.isSafeInteger(value))) {
    throw new RangeError(`Fencing counter out of range (${value})`);
  }
  return token;
}
