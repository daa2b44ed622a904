import { BackendUnavailableError } from '@lockkit/core';
import { settleWithin } from '@lockkit/core/backend';
import {
  type ConnectionSource,
  type KeepaliveSettings,
  LockConnection,
} from './lock-connection.js';
import { errnoOf, setupErrnos } from './mysql-errors.js';
import { Turn } from './turn.js';

/**
 * Locks one shared session holds before attempts go to another (up to `sharedConnections`):
 * the server's work per statement grows with the locks a session holds.
 */
const spreadAbove = 500;

/** Sizing and session settings of {@link LockConnections}. */
export interface LockConnectionSettings {
  readonly sharedConnections: number;
  readonly idleConnections: number;
  readonly sessionTimeoutSeconds: number;
  readonly keepalive: KeepaliveSettings;
  /** Bound (ms) on opening a session: connect, login and the session set-up statements. */
  readonly connectTimeoutMs: number;
}

/**
 * The provider's sessions. Attempts and releases are multiplexed over a few shared
 * sessions (never one that holds a key the attempt would take: `GET_LOCK` would stack on
 * it); another is opened, up to `sharedConnections`, while the open ones are busy or hold
 * {@link spreadAbove} locks each. A blocking wait gets a session that holds nothing and runs
 * nothing else, so it never delays someone's release.
 */
export class LockConnections {
  readonly #source: ConnectionSource;
  readonly #settings: LockConnectionSettings;
  readonly #all = new Set<LockConnection>();
  readonly #opening = new Set<Promise<LockConnection>>();
  #closed = false;

  constructor(source: ConnectionSource, settings: LockConnectionSettings) {
    this.#source = source;
    this.#settings = settings;
  }

  /** Open sessions (for tests and diagnostics). */
  get size(): number {
    return this.#all.size;
  }

  /** Where sessions go (`host:port` or socket path), for error messages. */
  get address(): string {
    return this.#source.address;
  }

  /** Server ids of the open sessions. */
  get connectionIds(): number[] {
    return [...this.#all].map((connection) => connection.id);
  }

  /**
   * A session for a non-blocking attempt on `base` that holds none of `conflicts`. The
   * session is marked busy with `base` until {@link done} is called.
   */
  forAttempt(base: string, conflicts: readonly string[]): LockConnection | Promise<LockConnection> {
    // The common case without a promise: an open session with nothing in flight.
    for (const connection of this.#all) {
      if (
        connection.pending === 0 &&
        connection.held.size < spreadAbove &&
        !connection.waiting &&
        !connection.lost &&
        !holdsAny(connection, conflicts)
      ) {
        return this.#begin(connection, base);
      }
    }
    return this.#forAttemptSlow(base, conflicts);
  }

  async #forAttemptSlow(base: string, conflicts: readonly string[]): Promise<LockConnection> {
    for (;;) {
      let best: LockConnection | undefined;
      let usable = 0;
      const sameBase: Promise<void>[] = [];
      for (const connection of this.#all) {
        if (connection.waiting || connection.lost) continue;
        usable += 1;
        if (holdsAny(connection, conflicts)) continue;
        const busy = connection.busyBases.get(base);
        if (busy) sameBase.push(busy.ended);
        else if (!best || lessBusy(connection, best)) best = connection;
      }
      const roomToGrow = usable + this.#opening.size < this.#settings.sharedConnections;
      const crowded = best !== undefined && (best.pending > 0 || best.held.size >= spreadAbove);
      let connection: LockConnection;
      if (best && (!crowded || !roomToGrow)) connection = best;
      else if (roomToGrow) connection = await this.#open();
      else if (sameBase.length > 0 || this.#opening.size > 0) {
        // Attempts on one lock take turns per session (each must see what the previous one
        // took); sessions on their way are shared rather than more opened.
        await Promise.race([...sameBase, ...this.#opening]).catch(() => undefined);
        continue;
      } else connection = await this.#open();
      return this.#begin(connection, base);
    }
  }

  #begin(connection: LockConnection, base: string): LockConnection {
    connection.pending += 1;
    connection.busyBases.set(base, new Turn());
    return connection;
  }

  /** A session that holds nothing, marked as waiting until {@link done}. */
  async forWait(): Promise<LockConnection> {
    for (const connection of this.#all) {
      if (connection.idle) {
        connection.waiting = true;
        return connection;
      }
    }
    const connection = await this.#open();
    connection.waiting = true;
    return connection;
  }

  /** Ends an attempt (`base`) or a wait on `connection`, and trims surplus idle sessions. */
  done(connection: LockConnection, base?: string): void {
    if (base === undefined) connection.waiting = false;
    else {
      connection.pending -= 1;
      connection.busyBases.get(base)?.end();
      connection.busyBases.delete(base);
    }
    this.settle(connection);
  }

  /** Closes `connection` if it is idle and more sessions are open than the provider keeps. */
  settle(connection: LockConnection): void {
    const keep = this.#settings.sharedConnections + this.#settings.idleConnections;
    if (connection.lost) this.#all.delete(connection);
    else if (connection.idle && this.#all.size > keep) {
      this.#all.delete(connection);
      void connection.close(this.#source);
    }
  }

  /** `KILL QUERY id` from a shared session (ends a blocking wait of ours). */
  async killQuery(id: number): Promise<void> {
    const connection = await this.forAttempt('', []);
    try {
      await connection.query(`KILL QUERY ${Number(id)}`);
    } finally {
      this.done(connection, '');
    }
  }

  /** Closes every session. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#all];
    this.#all.clear();
    await Promise.all(all.map((connection) => connection.close(this.#source)));
  }

  #open(): Promise<LockConnection> {
    const opening = this.#openOne();
    this.#opening.add(opening);
    void opening.then(
      () => this.#opening.delete(opening),
      () => this.#opening.delete(opening),
    );
    return opening;
  }

  async #openOne(): Promise<LockConnection> {
    if (this.#closed) throw new BackendUnavailableError('The MySQL lock provider is closed');
    const { address } = this.#source;
    const opening = LockConnection.open(
      this.#source,
      this.#settings.sessionTimeoutSeconds,
      this.#settings.keepalive,
      (gone) => this.#all.delete(gone),
    );
    const connection = await settleWithin(opening, this.#settings.connectTimeoutMs, (late) => {
      void late.close(this.#source);
    }).catch((error: unknown) => {
      const detail = error instanceof Error ? error.message : String(error);
      throw new BackendUnavailableError(
        `Could not open a MySQL connection to ${address}: ${detail}`,
        // Wrong credentials or database: waiting does not fix them.
        { cause: error, retryable: !setupErrnos.has(errnoOf(error) ?? 0) },
      );
    });
    if (this.#closed) {
      await connection.close(this.#source);
      throw new BackendUnavailableError('The MySQL lock provider is closed');
    }
    this.#all.add(connection);
    return connection;
  }
}

function holdsAny(connection: LockConnection, keys: readonly string[]): boolean {
  for (const key of keys) if (connection.held.has(key)) return true;
  return false;
}

/** Fewer statements in flight first, then fewer locks held. */
function lessBusy(connection: LockConnection, than: LockConnection): boolean {
  if (connection.pending !== than.pending) return connection.pending < than.pending;
  return connection.held.size < than.held.size;
}
