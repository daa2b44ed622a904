import type { LockConnection } from './lock-connection.js';
import { errnoOf } from './mysql-errors.js';

/**
 * Runs `statement`; if the object it uses (a table, a sequence) does not exist yet (the server
 * reports that before evaluating anything, so no GET_LOCK ran), creates it once and runs
 * `statement` again. One per object, shared by every session that uses it.
 */
export class OnDemand {
  readonly #missing: number;
  readonly #create: (connection: LockConnection) => Promise<unknown>;
  #creating: Promise<void> | undefined;

  /** `create`: the DDL, or what creates the objects (run once at a time). */
  constructor(
    missing: number,
    create: string | ((connection: LockConnection) => Promise<unknown>),
  ) {
    this.#missing = missing;
    this.#create = typeof create === 'string' ? (connection) => connection.query(create) : create;
  }

  /** Runs `statement` (sent at once, before anything is awaited). */
  async run<T>(connection: LockConnection, statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (error) {
      if (errnoOf(error) !== this.#missing) throw error;
    }
    await this.create(connection);
    return statement();
  }

  /** Creates the objects (joins a creation already under way). */
  create(connection: LockConnection): Promise<void> {
    this.#creating ??= this.#create(connection)
      .then(() => undefined)
      .finally(() => {
        this.#creating = undefined;
      });
    return this.#creating;
  }
}
