import type pg from 'pg';
import { backendPid, type Statement, startOwnSession } from './advisory-sql.js';
import type { OpenedClient } from './connection-source.js';
import { KeyedTurns } from './keyed-turns.js';
import { describeError } from './pg-errors.js';

/** Reports a grant lost (core's `lose`). */
export type LoseFunction = (reason: string, cause?: unknown) => void;

/** How a connection tells its owner about changes. */
export interface LockConnectionHooks {
  /** No query in flight and nothing held or pending. */
  idle(connection: LockConnection): void;
  /** The session is gone (already removed from use; its grants were told). */
  failed(connection: LockConnection): void;
  /** The keepalive query (the pid, and maybe the tokens of broken holds: `broken`). */
  keepaliveText(): string;
  /** The keepalive found holds of this session broken by an operator (their tokens). */
  broken(connection: LockConnection, tokens: readonly string[]): void;
}

/** Keepalive settings. */
export interface KeepaliveSettings {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** `pending` marks a key an attempt is in flight for (so no second attempt stacks on it). */
export type HeldMark = object | 'pending';

type ConnectionState = 'active' | 'waiting' | 'failed' | 'closed';

function noop(): void {}

/**
 * One PostgreSQL session that holds advisory locks. It knows which keys it holds (a session
 * must never take a key twice: PostgreSQL would stack it, or let a reader jump a waiting
 * writer, or upgrade a reader), runs the keepalive while it holds anything, and reports
 * every grant on it lost when the session fails (error, end, keepalive deadline, changed
 * backend pid).
 */
export class LockConnection {
  readonly client: pg.ClientBase;
  /** `pg_backend_pid()` when the session was opened. */
  readonly pid: number;
  /** The session runs without statement_timeout (it is ours: set at start). */
  readonly untimed: boolean;
  /** Held (or being tried) keys, as decimal text → the grant holding it. */
  readonly held: Map<string, HeldMark> = new Map();
  /** Semaphore attempts of one semaphore run one after another on a session. */
  readonly turns: KeyedTurns = new KeyedTurns();
  /** Semaphore slots this session holds, by semaphore key (to skip them in attempts). */
  readonly slots: Map<string, Set<number>> = new Map();
  /** Queries sent and not answered yet. */
  inFlight = 0;
  /** Attempts that picked this session and have not finished (see {@link claim}). */
  claims = 0;
  state: ConnectionState = 'active';
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** performance.now() of the last attempt on this session (for the idle timeout). */
  lastUsed = 0;
  readonly #opened: OpenedClient;
  readonly #hooks: LockConnectionHooks;
  readonly #keepalive: KeepaliveSettings;
  readonly #losers = new Map<object, LoseFunction>();
  #tail: Promise<unknown> = Promise.resolve();
  #keepaliveTimer: NodeJS.Timeout | undefined;
  readonly #onError = (error: Error): void =>
    this.fail(`the connection failed: ${error.message}`, error);
  readonly #onEnd = (): void => this.fail('the connection was closed by the server');

  private constructor(
    opened: OpenedClient,
    pid: number,
    hooks: LockConnectionHooks,
    keepalive: KeepaliveSettings,
  ) {
    this.#opened = opened;
    this.client = opened.client;
    this.pid = pid;
    this.untimed = opened.owned;
    this.#hooks = hooks;
    this.#keepalive = keepalive;
    this.client.on('error', this.#onError);
    this.client.on('end', this.#onEnd);
    opened.keepProcessAlive(false);
  }

  /** Wraps a freshly opened client (reads its backend pid). */
  static async start(
    opened: OpenedClient,
    hooks: LockConnectionHooks,
    keepalive: KeepaliveSettings,
  ): Promise<LockConnection> {
    try {
      const result = await opened.client.query<{ pid: number }>(
        opened.owned ? startOwnSession : backendPid,
      );
      return new LockConnection(opened, result.rows[0]!.pid, hooks, keepalive);
    } catch (error) {
      await opened.dispose(true);
      throw error;
    }
  }

  /** True while grants on this session can be trusted and queries sent. */
  get usable(): boolean {
    return this.state === 'active' || this.state === 'waiting';
  }

  /** Runs a query (prepared once per session when given a {@link Statement}). */
  query<R extends pg.QueryResultRow>(
    statement: Statement,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return this.#track(() =>
      this.client.query<R>({ name: statement.name, text: statement.text, values }),
    );
  }

  /** Runs an unnamed query; without `values` it may hold several statements. */
  text<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.#track(() =>
      values ? this.client.query<R>(text, values) : this.client.query<R>(text),
    );
  }

  /** Reserves the session for an attempt (it is not handed to a wait meanwhile). */
  claim(): void {
    this.claims += 1;
  }

  /** Ends a {@link claim}. */
  unclaim(): void {
    this.claims -= 1;
    this.#checkIdle();
  }

  /** Attempts and queries under way on this session. */
  get load(): number {
    return this.inFlight + this.claims;
  }

  /** True when nothing is held, pending, claimed or in flight. */
  get isEmpty(): boolean {
    return this.inFlight === 0 && this.claims === 0 && this.held.size === 0;
  }

  /** Records a grant on `key` (or clears it with `undefined`); keeps the keepalive in step. */
  mark(key: string, grant: HeldMark | undefined): void {
    if (grant === undefined) this.held.delete(key);
    else this.held.set(key, grant);
    this.#syncKeepalive();
    this.#checkIdle();
  }

  /** Calls `lose` when this session fails; returns the function that stops that. */
  watchLoss(grant: object, lose: LoseFunction): () => void {
    if (!this.usable) {
      queueMicrotask(() => lose('the connection holding the lock had already failed'));
      return noop;
    }
    this.#losers.set(grant, lose);
    return () => {
      this.#losers.delete(grant);
    };
  }

  /**
   * The session is gone or can no longer be trusted: tell every grant on it, stop using it
   * and destroy it (which makes the server free whatever it still holds).
   */
  fail(reason: string, cause?: unknown): void {
    if (!this.usable) return;
    this.state = 'failed';
    this.#stopTimers();
    const losers = [...this.#losers.values()];
    this.#losers.clear();
    this.#detach();
    void this.#opened.dispose(true);
    this.#hooks.failed(this);
    for (const lose of losers) lose(reason, cause);
  }

  /** Gives the session back (to the pool, or ends it); destroys it if it holds anything. */
  close(): Promise<void> {
    if (!this.usable) return Promise.resolve();
    const destroy = this.held.size > 0 || this.inFlight > 0;
    this.state = 'closed';
    this.#stopTimers();
    this.#losers.clear();
    this.#detach();
    return this.#opened.dispose(destroy);
  }

  /** Counts a statement in flight; the socket keeps the process alive only meanwhile. */
  #track<T>(run: () => Promise<T>): Promise<T> {
    if (this.inFlight++ === 0) this.#opened.keepProcessAlive(true);
    this.#syncKeepalive();
    let result: Promise<T>;
    if (this.#opened.pipelined) {
      result = run();
    } else {
      result = this.#tail.then(run);
      this.#tail = result.then(noop, noop);
    }
    const done = (): void => {
      if (--this.inFlight === 0) this.#opened.keepProcessAlive(false);
      this.#checkIdle();
    };
    result.then(done, done);
    return result;
  }

  #checkIdle(): void {
    if (this.state === 'active' && this.isEmpty) {
      this.#hooks.idle(this);
    }
  }

  /** A waiting session becomes an active one (holding what its wait got, if anything). */
  activate(): void {
    if (this.state !== 'waiting') return;
    this.state = 'active';
    this.#syncKeepalive();
    this.#checkIdle();
  }

  /**
   * Arms the keepalive while an active session holds something or has statements in flight
   * (so a statement that never gets an answer is bounded too); a tick finding neither stops
   * (the timer is not cleared on every release: that would cost a timer per acquire).
   * A waiting session runs none: its blocking statement would hold the keepalive up.
   */
  #syncKeepalive(): void {
    if (
      !this.#keepaliveTimer &&
      this.state === 'active' &&
      (this.held.size > 0 || this.inFlight > 0)
    ) {
      this.#keepaliveTimer = setTimeout(
        () => void this.#runKeepalive(),
        this.#keepalive.intervalMs,
      );
      this.#keepaliveTimer.unref();
    }
  }

  async #runKeepalive(): Promise<void> {
    if (this.state !== 'active' || (this.held.size === 0 && this.inFlight === 0)) {
      this.#keepaliveTimer = undefined;
      return;
    }
    const { timeoutMs } = this.#keepalive;
    const deadline = setTimeout(
      () => this.fail(`the keepalive query was not answered within ${timeoutMs} ms`),
      timeoutMs,
    );
    deadline.unref();
    try {
      // Unnamed: through a pooler the statement may reach a session that never prepared it.
      const result = await this.text<{ pid: number; broken?: string[] }>(
        this.#hooks.keepaliveText(),
        [],
      );
      const pid = result.rows[0]?.pid;
      if (pid !== this.pid) {
        this.fail(
          `pg_backend_pid() changed from ${this.pid} to ${String(pid)}: a pooler moved the session, so its session locks are not ours`,
        );
      } else if (result.rows[0]?.broken?.length) {
        this.#hooks.broken(this, result.rows[0].broken);
      }
    } catch (error) {
      this.fail(`the keepalive query failed: ${describeError(error)}`, error);
    } finally {
      clearTimeout(deadline);
      this.#keepaliveTimer = undefined;
      this.#syncKeepalive();
    }
  }

  #stopTimers(): void {
    clearTimeout(this.#keepaliveTimer);
    this.#keepaliveTimer = undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  #detach(): void {
    this.client.removeListener('error', this.#onError);
    this.client.removeListener('end', this.#onEnd);
  }
}
