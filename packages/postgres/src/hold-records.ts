import pg from 'pg';
import {
  backendPid,
  type Statement,
  statement,
  tryExclusive,
  tryShared,
  trySlot,
  trySlots,
  unlockExclusive,
  unlockShared,
  unlockSlot,
  unlockSlots,
  waitExclusive,
  waitShared,
} from './advisory-sql.js';
import type { PostgresGrant } from './postgres-grant.js';

/** The server's clock in `Date.now()` ms. */
const nowMs = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** A statement and the values to bind to it. */
export interface BoundStatement {
  readonly statement: Statement;
  readonly values: unknown[];
}

/**
 * The holds table (one UNLOGGED row per hold: token, key, backend pid, owner, grant time,
 * permits — a weighted semaphore hold of n slots is one row, keyed by its first slot — and
 * `broken` once an operator's `forceRelease()` marked it), and the statements that
 * keep it in step with the advisory locks. Each row is written by the very statement that
 * takes the lock and deleted by the one that unlocks it (a data-modifying CTE around the
 * same statement), so no round trip is added. UNLOGGED: no WAL, so no commit flush per
 * acquire; rows of sessions that ended without unlocking stay until `forceRelease()` of
 * that lock removes them, and are never reported (`pg_locks` decides what is held).
 *
 * With `recording` false (the table is missing and may not be created) every statement is
 * the plain one of advisory-sql.ts.
 */
export class HoldRecords {
  readonly table: string;
  /** True once the table is known to exist (set by the fencing sequence's `ensure`). */
  recording = false;
  readonly #index: string;
  readonly #built = new Map<string, Statement>();

  constructor(table: string) {
    this.table = table;
    this.#index = `${table.slice(table.lastIndexOf('.') + 1)}_broken`;
  }

  /** The statements that create the table (simple protocol, run once per provider). */
  get createText(): string {
    return (
      `CREATE UNLOGGED TABLE IF NOT EXISTS ${this.table} (token bigint PRIMARY KEY, ` +
      'key bigint NOT NULL, pid integer NOT NULL, owner text, since bigint, ' +
      'permits integer NOT NULL DEFAULT 1, broken boolean NOT NULL DEFAULT false); ' +
      `CREATE INDEX IF NOT EXISTS ${this.#index} ON ${this.table} (pid) WHERE broken`
    );
  }

  /** A try-lock (and its token) of a mutex/RW key; `token` is NULL when not granted. */
  tryLock(
    shared: boolean,
    key: string,
    sequence: string,
    owner: string | undefined,
  ): BoundStatement {
    const plain = shared ? tryShared : tryExclusive;
    if (!this.recording) return { statement: plain, values: [key, sequence] };
    return {
      statement: this.#wrap(plain, '$1::bigint', '$3', 'WHERE token IS NOT NULL', 'token'),
      values: [key, sequence, encodeOwner(owner)],
    };
  }

  /** A blocking wait (prepared form, on a session without statement_timeout). */
  waitLock(
    shared: boolean,
    key: string,
    lockTimeout: string,
    sequence: string,
    owner: string | undefined,
  ): BoundStatement {
    const plain = shared ? waitShared : waitExclusive;
    if (!this.recording) return { statement: plain, values: [key, lockTimeout, sequence] };
    return {
      statement: this.#wrap(plain, '$1::bigint', '$4', '', 'token'),
      values: [key, lockTimeout, sequence, encodeOwner(owner)],
    };
  }

  /** The recording around the last statement of the pooled wait (inlined literals). */
  recordInline(select: string, key: bigint, owner: string | undefined): string {
    if (!this.recording) return select;
    const encoded = encodeOwner(owner);
    const literal = encoded === null ? 'NULL' : pg.escapeLiteral(encoded);
    return this.#wrapText(select, `'${key}'::bigint`, literal, '', 'token');
  }

  /** One attempt at a free slot of a semaphore (see `trySlot`). */
  trySlot(values: unknown[], owner: string | undefined): BoundStatement {
    if (!this.recording) return { statement: trySlot, values };
    return {
      statement: this.#wrap(trySlot, '$1::bigint # slot::bigint', '$7', '', 'slot, token'),
      values: [...values, encodeOwner(owner)],
    };
  }

  /**
   * A weighted attempt (see `trySlots`): one row for all its slots, keyed by the first, with
   * its permit count ($5).
   */
  trySlots(values: unknown[], owner: string | undefined): BoundStatement {
    if (!this.recording) return { statement: trySlots, values };
    const text = this.#wrapText(
      trySlots.text,
      '$1::bigint # slots[1]::bigint',
      '$7',
      'WHERE token IS NOT NULL',
      'token, slots',
      '$5::integer',
    );
    return { statement: this.#build(text), values: [...values, encodeOwner(owner)] };
  }

  /** The unlock of a grant (every slot of a weighted one), deleting its row. */
  unlockGrant(grant: PostgresGrant): BoundStatement {
    const { semaphore, fencingToken } = grant;
    if (semaphore && semaphore.slots.length > 1) {
      const values = [semaphore.key, semaphore.slots, semaphore.channel];
      return this.unlock('slots', values, fencingToken);
    }
    return semaphore
      ? this.unlock('slot', [grant.key, semaphore.channel], fencingToken)
      : this.unlock(grant.shared ? 'shared' : 'exclusive', [grant.key], fencingToken);
  }

  /** The unlock of a hold, deleting its row. */
  unlock(
    kind: 'exclusive' | 'shared' | 'slot' | 'slots',
    values: unknown[],
    token: bigint,
  ): BoundStatement {
    const plain = {
      exclusive: unlockExclusive,
      shared: unlockShared,
      slot: unlockSlot,
      slots: unlockSlots,
    }[kind];
    if (!this.recording) return { statement: plain, values };
    const n = values.length + 1;
    return {
      statement: this.#build(
        `WITH forgotten AS (DELETE FROM ${this.table} WHERE token = $${n}::bigint) ${plain.text}`,
      ),
      values: [...values, token.toString()],
    };
  }

  /** The keepalive: the backend pid, and the tokens of this session's broken holds. */
  get keepaliveText(): string {
    if (!this.recording) return backendPid.text;
    return `SELECT pg_backend_pid() AS pid, ARRAY(SELECT token::text FROM ${this.table} WHERE broken AND pid = pg_backend_pid()) AS broken`;
  }

  #wrap(plain: Statement, key: string, owner: string, where: string, out: string): Statement {
    return this.#build(this.#wrapText(plain.text, key, owner, where, out));
  }

  #wrapText(
    select: string,
    key: string,
    owner: string,
    where: string,
    out: string,
    permits?: string,
  ): string {
    const [column, value] = permits === undefined ? ['', ''] : [', permits', `, ${permits}`];
    return (
      `WITH attempt AS (${select}), recorded AS (INSERT INTO ${this.table} ` +
      `(token, key, pid, owner, since${column}) SELECT token::bigint, ${key}, pg_backend_pid(), ` +
      `${owner}, ${nowMs}${value} FROM attempt ${where}) SELECT ${out} FROM attempt`
    );
  }

  #build(text: string): Statement {
    let built = this.#built.get(text);
    if (!built) {
      built = statement(text);
      this.#built.set(text, built);
    }
    return built;
  }
}

/** Owner labels are stored as JSON (any string, NUL and lone surrogates included). */
export function encodeOwner(owner: string | undefined): string | null {
  return owner === undefined ? null : JSON.stringify(owner);
}

/** The owner of a row, or undefined when absent or not ours. */
export function decodeOwner(stored: string | null | undefined): string | undefined {
  if (stored == null) return undefined;
  try {
    const owner: unknown = JSON.parse(stored);
    return typeof owner === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}
