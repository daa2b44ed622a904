import { now } from '@lockkit/core/backend';
import type { Connection, QueryError } from 'mysql2';
import { ER_UNKNOWN_STMT_HANDLER, isInterrupted } from './mysql-errors.js';
import type { ConnectionSource, KeepaliveSettings } from './session-types.js';
import type { Turn } from './turn.js';

export type { ConnectionSource, KeepaliveSettings } from './session-types.js';

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number;

/**
 * How a statement goes to the server: `'try'` (one that never blocks) as a prepared statement,
 * the cheapest round trip; `'wait'` (one that may block) as text, so that PROCESSLIST shows
 * which key the session waits for (the head waiter's wake-up and `lockkit inspect` read it).
 */
export type StatementMode = 'try' | 'wait';

type LoseListener = (reason: string, cause?: unknown) => void;

/**
 * One server session used for locks. Tracks what it holds (so the same session never takes
 * a lock twice: GET_LOCK would stack), whether it is busy with a blocking wait, and its
 * health: an `error`/`end` event, a keepalive that misses its deadline, or a changed
 * `CONNECTION_ID()` marks it lost and tells every grant on it.
 */
export class LockConnection {
  /** `CONNECTION_ID()` of the session (the id `KILL` takes). */
  readonly id: number;
  /** MariaDB (has `KILL QUERY ID`) rather than MySQL. */
  readonly mariadb: boolean;
  /** MariaDB 10.3+ (has `SEQUENCE`s). */
  readonly sequences: boolean;
  /** Keys held by grants on this session (each at most once). */
  readonly held: Set<string> = new Set();
  /** Lock bases with an attempt in flight on this session. */
  readonly busyBases: Map<string, Turn> = new Map();
  /** Set once a hold row was recorded here: how the keepalive reads broken holds (hold-records.ts). */
  brokenKeys: { readonly query: string; found(keys: readonly string[]): void } | undefined;
  /** True while a blocking wait runs (nothing else may be queued behind it). */
  waiting = false;
  /** Operations that may end up holding a lock on this session. */
  pending = 0;
  readonly #raw: Connection;
  readonly #keepalive: KeepaliveSettings;
  readonly #listeners = new Set<LoseListener>();
  readonly #onGone: (connection: LockConnection) => void;
  #lost: { reason: string; cause: unknown } | undefined;
  #closing = false;
  #timer: NodeJS.Timeout | undefined;
  #check: NodeJS.Timeout | undefined;
  #pinging = false;
  /** Statements sent or queued on the session, and since when the oldest has been running. */
  #queued = 0;
  #headSince = 0;
  readonly #abandon = new Set<(error: Error) => void>();
  /** The socket, when its ref/unref is ours to switch (own connections). */
  readonly #socket: { ref(): void; unref(): void } | undefined;

  private constructor(
    raw: Connection,
    session: { readonly id: number; readonly version: string },
    keepalive: KeepaliveSettings,
    onGone: (connection: LockConnection) => void,
    owned: boolean,
  ) {
    this.#raw = raw;
    this.id = session.id;
    this.mariadb = /mariadb/i.test(session.version);
    const [major = 0, minor = 0] = session.version.split('.').map(Number);
    this.sequences = this.mariadb && (major > 10 || (major === 10 && minor >= 3));
    this.#keepalive = keepalive;
    this.#onGone = onGone;
    raw.on('error', this.#onError);
    raw.on('end', this.#onEnd);
    const stream = (raw as { stream?: Partial<{ ref(): void; unref(): void }> }).stream;
    if (owned && typeof stream?.ref === 'function' && typeof stream.unref === 'function') {
      this.#socket = stream as { ref(): void; unref(): void };
      this.#socket.unref();
    }
    // From the start, so that a statement that never gets an answer is bounded too.
    this.#timer = setInterval(() => this.#ping(), keepalive.intervalMs);
    this.#timer.unref();
  }

  /** Opens a session and sets it up (`wait_timeout`, reads `CONNECTION_ID()`). */
  static async open(
    source: ConnectionSource,
    sessionTimeoutSeconds: number,
    keepalive: KeepaliveSettings,
    onGone: (connection: LockConnection) => void,
  ): Promise<LockConnection> {
    const raw = await source.open();
    try {
      await run(raw, 'SET SESSION wait_timeout = ?', [sessionTimeoutSeconds]);
      const rows = await run<{ id: number | string; version: string }[]>(
        raw,
        'SELECT CONNECTION_ID() AS id, VERSION() AS version',
      );
      const session = { id: Number(rows[0]?.id), version: String(rows[0]?.version) };
      return new LockConnection(raw, session, keepalive, onGone, source.owned);
    } catch (error) {
      await source.dispose(raw, false).catch(() => undefined);
      throw error;
    }
  }

  /** The session is gone (or no longer trusted). */
  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /** No grant, wait or attempt uses the session. */
  get idle(): boolean {
    return this.held.size === 0 && !this.waiting && this.pending === 0 && !this.lost;
  }

  /** Runs one statement. A fatal error marks the session lost. */
  query<T>(sql: string, values?: readonly SqlValue[]): Promise<T> {
    return this.#send(false, sql, values);
  }

  /**
   * Runs one statement as a server-side prepared statement (prepared once per session, then
   * only executed: no parsing on the server, no escaping on the client). For the statements
   * every acquire and release sends.
   */
  execute<T>(sql: string, values?: readonly SqlValue[]): Promise<T> {
    return this.#send(true, sql, values);
  }

  /** Runs one statement the way `mode` says (see {@link StatementMode}). */
  statement<T>(mode: StatementMode, sql: string, values?: readonly SqlValue[]): Promise<T> {
    return this.#send(mode === 'try', sql, values);
  }

  #send<T>(prepared: boolean, sql: string, values: readonly SqlValue[] | undefined): Promise<T> {
    if (this.#lost) return Promise.reject(this.#lostError());
    if (this.#queued++ === 0) {
      this.#headSince = now();
      this.#socket?.ref(); // work in progress keeps the process alive; an idle session not
    }
    // One plain promise per statement (the hot path of every acquire and release). mysql2 may
    // never answer a statement queued on a socket the server just closed, so losing the
    // session rejects it through #abandon; a late answer then changes nothing.
    return new Promise<T>((resolve, reject) => {
      this.#abandon.add(reject);
      const answered = (error: QueryError | null, result: unknown): void => {
        this.#abandon.delete(reject);
        // Statements run one at a time: the next one (if any) starts now.
        if (--this.#queued > 0) this.#headSince = now();
        else this.#socket?.unref();
        if (!error) resolve(result as T);
        else {
          if (error.fatal) this.markLost('the MySQL connection failed', error);
          else if (error.errno === ER_UNKNOWN_STMT_HANDLER) {
            this.markLost(
              'the session changed (its prepared statements are gone): a proxy?',
              error,
            );
          }
          reject(error);
        }
      };
      const bound = (values ?? noValues) as SqlValue[];
      if (prepared) this.#raw.execute(sql, bound, answered);
      else this.#raw.query(sql, bound, answered);
    });
  }

  /** Records a key as held. */
  hold(key: string): void {
    this.held.add(key);
  }

  /** Forgets a held key (the keepalive runs on: it keeps an idle session from `wait_timeout`). */
  unhold(key: string): void {
    this.held.delete(key);
  }

  /** Calls `listener` once if the session is lost; returns the function that stops that. */
  onLost(listener: LoseListener): () => void {
    if (this.#lost) {
      listener(this.#lost.reason, this.#lost.cause);
      return () => undefined;
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Declares the session lost: destroys it and tells every listener (once). */
  markLost(reason: string, cause?: unknown): void {
    if (this.#lost) return;
    this.#lost = { reason, cause };
    this.#stopKeepalive();
    this.#detach(true);
    this.#raw.destroy();
    for (const fail of [...this.#abandon]) fail(this.#lostError());
    this.#onGone(this);
    for (const listener of [...this.#listeners]) listener(reason, cause);
    this.#listeners.clear();
  }

  /** Ends or hands back a healthy idle session; destroys one that is not. */
  async close(source: ConnectionSource): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#stopKeepalive();
    const healthy = !this.#lost;
    this.#detach(!healthy);
    this.#lost ??= { reason: 'the connection was closed', cause: undefined };
    await source.dispose(this.#raw, healthy);
  }

  #lostError(): Error {
    return new Error(`MySQL connection ${this.id} is gone: ${this.#lost?.reason ?? ''}`, {
      cause: this.#lost?.cause,
    });
  }

  #ping(): void {
    // A blocking wait answers when it is granted; the session holds nothing meanwhile.
    if (this.#pinging || this.#lost || this.waiting) return;
    if (this.#queued > 0) {
      // Statements are in flight: their answers are the keepalive (a ping would only queue
      // behind them). Lost if the one running takes longer than the deadline.
      const left = this.#headSince + this.#keepalive.timeoutMs - now();
      if (left <= 0) {
        this.markLost(`no answer within ${this.#keepalive.timeoutMs} ms`);
      } else if (!this.#check) {
        this.#check = setTimeout(() => {
          this.#check = undefined;
          this.#ping();
        }, left);
        this.#check.unref();
      }
      return;
    }
    this.#pinging = true;
    const timer = setTimeout(() => {
      this.markLost(`no keepalive answer within ${this.#keepalive.timeoutMs} ms`);
    }, this.#keepalive.timeoutMs);
    timer.unref();
    const broken = this.brokenKeys && this.held.size > 0 ? this.brokenKeys.query : 'NULL';
    this.query<{ id: number | string; broken: Buffer | string | null }[]>(
      `SELECT CONNECTION_ID() AS id, ${broken} AS broken`,
    ).then(
      (rows) => {
        clearTimeout(timer);
        this.#pinging = false;
        const id = Number(rows[0]?.id);
        if (id !== this.id) {
          this.markLost(`the session changed (CONNECTION_ID ${this.id} → ${id}): a proxy?`);
        } else if (rows[0]?.broken) {
          this.brokenKeys?.found(rows[0].broken.toString().split(' '));
        }
      },
      (error: unknown) => {
        clearTimeout(timer);
        this.#pinging = false;
        // An interrupted statement is still an answer from this very session.
        if (!isInterrupted(error)) this.markLost('the keepalive query failed', error);
      },
    );
  }

  #stopKeepalive(): void {
    clearInterval(this.#timer);
    clearTimeout(this.#check);
    this.#timer = undefined;
    this.#check = undefined;
  }

  #detach(destroying: boolean): void {
    this.#raw.off('error', this.#onError);
    this.#raw.off('end', this.#onEnd);
    // A late socket error on a destroyed connection must not become an unhandled 'error'.
    if (destroying) this.#raw.on('error', () => undefined);
  }

  readonly #onError = (error: unknown): void => {
    if (!this.#closing) this.markLost('the MySQL connection failed', error);
  };

  readonly #onEnd = (): void => {
    if (!this.#closing) this.markLost('the server closed the MySQL connection');
  };
}

const noValues: readonly SqlValue[] = [];

/** Promise wrapper of the callback API. */
function run<T>(raw: Connection, sql: string, values?: readonly SqlValue[]): Promise<T> {
  return new Promise((resolve, reject) => {
    raw.query(sql, values ? [...values] : [], (error, result) => {
      if (error) reject(error);
      else resolve(result as T);
    });
  });
}
