import { BackendUnavailableError } from '@lockkit/core';
import { HoldRecords } from './hold-records.js';
import type { LockConnection } from './lock-connection.js';
import { describeError, sqlState, sqlStateOf } from './pg-errors.js';

/**
 * Where fencing tokens come from: ONE sequence (`CACHE 1`) for every lock name, drawn with
 * `nextval` in the same statement that took the lock, after the grant.
 *
 * Why a sequence: `nextval` is non-transactional and WAL-logs only every 32nd value (the
 * logged value runs ahead, so a restart or crash never hands out a value twice), so it adds
 * almost nothing to an acquire and no row lock or dead tuple; a counter row per name would
 * serialize same-name acquirers on a row lock, bloat with dead tuples and commit a write per
 * acquire, and a sequence per name would put one catalog object per name. A single counter
 * that only grows gives every name strictly increasing tokens, because each token is drawn
 * while its lock is held. Tokens have gaps and are shared across names; neither matters to
 * a fencing check ("reject anything lower than the highest token seen").
 */
export class FencingSequence {
  readonly name: string;
  /** The holds table, checked (and created) together with the sequence. */
  readonly holds: HoldRecords;
  readonly #create: boolean;
  #ready: Promise<void> | undefined;
  #confirmed = false;

  readonly #record: boolean;

  constructor(name: string, create: boolean, holdsTable: string, record: boolean) {
    this.name = name;
    this.holds = new HoldRecords(holdsTable);
    this.#record = record;
    this.#create = create;
  }

  /** True once the sequence is known to exist (lets the hot path skip an await). */
  get confirmed(): boolean {
    return this.#confirmed;
  }

  /** Makes sure the sequence exists (once per provider; retried after a failure). */
  ensure(connection: LockConnection): Promise<void> {
    this.#ready ??= this.#ensure(connection).then(
      () => {
        this.#confirmed = true;
      },
      (error: unknown) => {
        this.#ready = undefined;
        throw error;
      },
    );
    return this.#ready;
  }

  async #ensure(connection: LockConnection): Promise<void> {
    // Both checks at once (own sessions pipeline them: one round trip).
    await Promise.all([
      this.#ensureSequence(connection),
      this.#record ? this.#ensureHolds(connection) : undefined,
    ]);
  }

  /** Finds or creates the holds table; without it (and no right to create it) holds go unrecorded. */
  async #ensureHolds(connection: LockConnection): Promise<void> {
    const holds = this.holds;
    try {
      let present = await exists(connection, holds.table);
      if (!present && this.#create) {
        await connection.text(holds.createText);
        present = true;
      }
      holds.recording = present;
    } catch (error) {
      const state = sqlStateOf(error);
      if (state === sqlState.duplicateTable || state === sqlState.uniqueViolation) {
        holds.recording = true; // another client created it at the same moment
        return;
      }
      throw new BackendUnavailableError(
        `Could not prepare the holds table "${holds.table}": ${describeError(error)}`,
        { cause: error },
      );
    }
  }

  async #ensureSequence(connection: LockConnection): Promise<void> {
    try {
      const found = await connection.text<{ present: boolean }>(
        'SELECT to_regclass($1) IS NOT NULL AS present',
        [this.name],
      );
      if (found.rows[0]?.present) return;
      if (!this.#create) {
        throw new BackendUnavailableError(
          `The fencing sequence "${this.name}" does not exist (createFencingSequence is false): create it with CREATE SEQUENCE ${this.name} AS bigint CACHE 1`,
          { retryable: false }, // stays missing until someone creates it: no use waiting
        );
      }
      const identifier = await connection.text<{ identifier: string }>(
        `SELECT string_agg(quote_ident(part), '.' ORDER BY position) AS identifier
         FROM unnest(parse_ident($1)) WITH ORDINALITY AS parts(part, position)`,
        [this.name],
      );
      await connection.text(
        `CREATE SEQUENCE IF NOT EXISTS ${identifier.rows[0]!.identifier} AS bigint CACHE 1 NO CYCLE`,
      );
    } catch (error) {
      const state = sqlStateOf(error);
      // Another client created it at the same moment.
      if (state === sqlState.duplicateTable || state === sqlState.uniqueViolation) return;
      if (BackendUnavailableError.isInstance(error)) throw error;
      throw new BackendUnavailableError(
        `Could not prepare the fencing sequence "${this.name}": ${describeError(error)}`,
        { cause: error },
      );
    }
  }
}

async function exists(connection: LockConnection, name: string): Promise<boolean> {
  const found = await connection.text<{ present: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AS present',
    [name],
  );
  return found.rows[0]?.present === true;
}
