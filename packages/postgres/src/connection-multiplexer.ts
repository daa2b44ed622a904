import { BackendUnavailableError } from '@lockkit/core';
import { now, settleWithin, untilAborted } from '@lockkit/core/backend';
import type { ConnectionSource } from './connection-source.js';
import {
  type KeepaliveSettings,
  LockConnection,
  type LockConnectionHooks,
} from './lock-connection.js';
import { describeError } from './pg-errors.js';
import { WaitGate } from './wait-gate.js';

/** Locks one session holds before another shared session is opened (up to the limit). */
const spreadAbove = 500;

/** Settings of the multiplexer. */
export interface MultiplexerSettings {
  readonly sharedConnections: number;
  readonly maxWaitConnections: number;
  readonly idleTimeoutMs: number;
  readonly keepalive: KeepaliveSettings;
  /** Bound (ms) on opening a session, from the connect to the answer of its first query. */
  readonly connectTimeoutMs: number;
  /** The keepalive query, and what to do with holds it finds broken. */
  readonly holds: Pick<LockConnectionHooks, 'keepaliveText' | 'broken'>;
}

/**
 * Spreads many held locks over few sessions. Try-locks and unlocks go to an active session
 * that does not already hold (or try) the key, least busy first; a new session is opened
 * while under `sharedConnections` when all are busy or hold many locks, and beyond it only
 * when every session holds the key. A blocking wait takes a session of its own that holds
 * nothing (so no unlock ever queues behind it); once granted, that session joins the active
 * ones. Sessions that hold nothing are closed after `idleTimeoutMs`.
 */
export class ConnectionMultiplexer {
  readonly #source: ConnectionSource;
  readonly #settings: MultiplexerSettings;
  readonly #active = new Set<LockConnection>();
  readonly #waiting = new Set<LockConnection>();
  readonly #opening = new Set<Promise<LockConnection>>();
  readonly #gate: WaitGate;
  readonly #closing = new Set<Promise<void>>();
  /** Keys this process waits for server-side right now (key → number of waits). */
  readonly #waitingFor = new Map<string, number>();
  #closed = false;

  constructor(source: ConnectionSource, settings: MultiplexerSettings) {
    this.#source = source;
    this.#settings = settings;
    this.#gate = new WaitGate(settings.maxWaitConnections);
  }

  /** Sessions open right now (active + waiting). */
  get size(): number {
    return this.#active.size + this.#waiting.size;
  }

  /** Every open session (for tests and diagnostics). */
  get connections(): readonly LockConnection[] {
    return [...this.#active, ...this.#waiting];
  }

  /**
   * An active session for an attempt that neither holds nor is trying `key`, with `key`
   * already marked pending on it (settle it with `mark`). With `key` undefined, any active
   * session, claimed for the attempt (`unclaim()` when done). When every session holds or
   * tries `key` and `exclusive` is set, resolves undefined instead of opening a session for
   * an attempt that cannot succeed (this process already has, or is getting, the lock).
   */
  async forAttempt(
    key: string | undefined,
    exclusive = false,
  ): Promise<LockConnection | undefined> {
    for (;;) {
      this.#assertOpen();
      const best = this.#pick(key);
      const room = this.#active.size + this.#opening.size < this.#settings.sharedConnections;
      const crowded = best !== undefined && (best.load > 0 || best.held.size >= spreadAbove);
      if (best && (!crowded || !room)) return this.#claim(best, key);
      if (!best && exclusive && this.#holdsAnywhere(key)) return undefined;
      if (room || (!best && this.#opening.size === 0)) {
        await this.#openActive();
      } else if (!best) {
        await Promise.race(this.#opening);
      } else {
        return this.#claim(best, key);
      }
    }
  }

  /**
   * True when this process already holds, tries or waits for `key`: an exclusive attempt
   * cannot succeed then, and an acquire can go straight to a server-side wait.
   */
  busyWith(key: string): boolean {
    return this.#waitingFor.has(key) || this.#holdsAnywhere(key);
  }

  /**
   * A session of its own for a blocking wait for `key` (queued in arrival order behind
   * `maxWaitConnections` running waits). Resolves null if `signal` aborts first.
   * Give it back with {@link endWait}.
   */
  async forWait(signal: AbortSignal, key: string): Promise<LockConnection | null> {
    this.#assertOpen();
    this.#waitingFor.set(key, (this.#waitingFor.get(key) ?? 0) + 1);
    const connection = await this.#forWait(signal).catch((error: unknown) => {
      this.#stopWaitingFor(key);
      throw error;
    });
    if (!connection) this.#stopWaitingFor(key);
    return connection;
  }

  async #forWait(signal: AbortSignal): Promise<LockConnection | null> {
    if (!(await this.#gate.enter(signal))) return null;
    try {
      this.#assertOpen();
      for (const connection of this.#active) {
        if (connection.isEmpty) {
          this.#active.delete(connection);
          return this.#startWait(connection);
        }
      }
      const opening = this.#open();
      const connection = await untilAborted(opening, signal);
      if (!connection) {
        void opening.then((late) => this.#adopt(late), noop);
        this.#gate.leave();
        return null;
      }
      return this.#startWait(connection);
    } catch (error) {
      this.#gate.leave();
      throw error;
    }
  }

  /** Ends a wait: the session joins the active ones (holding its grant, if any). */
  endWait(connection: LockConnection, key: string): void {
    if (!this.#waiting.delete(connection)) return;
    this.#stopWaitingFor(key);
    this.#gate.leave();
    if (connection.state !== 'waiting') return;
    connection.activate();
    this.#adopt(connection);
  }

  /** Closes every session (destroying those that still hold something). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#gate.drain();
    await Promise.allSettled(this.#opening);
    const all = [...this.#active, ...this.#waiting];
    this.#active.clear();
    this.#waiting.clear();
    await Promise.all(all.map((connection) => connection.close()));
    while (this.#closing.size > 0) await Promise.all(this.#closing);
  }

  /**
   * The least busy session that does not hold `key`; among equally busy ones the one
   * holding the fewest locks (PostgreSQL's per-statement cost grows with the number of
   * locks a session holds, so locks are spread, not packed).
   */
  #pick(key: string | undefined): LockConnection | undefined {
    let best: LockConnection | undefined;
    for (const connection of this.#active) {
      if (key !== undefined && connection.held.has(key)) continue;
      if (
        !best ||
        connection.load < best.load ||
        (connection.load === best.load && connection.held.size < best.held.size)
      ) {
        best = connection;
      }
    }
    return best;
  }

  #stopWaitingFor(key: string): void {
    const count = (this.#waitingFor.get(key) ?? 1) - 1;
    if (count > 0) this.#waitingFor.set(key, count);
    else this.#waitingFor.delete(key);
  }

  #holdsAnywhere(key: string | undefined): boolean {
    if (key === undefined) return false;
    for (const connection of this.#active) if (connection.held.has(key)) return true;
    return false;
  }

  #claim(connection: LockConnection, key: string | undefined): LockConnection {
    connection.lastUsed = now(); // the idle timer, if armed, checks this when it fires
    if (key === undefined) connection.claim();
    else connection.mark(key, 'pending');
    return connection;
  }

  #startWait(connection: LockConnection): LockConnection {
    clearTimeout(connection.idleTimer);
    connection.idleTimer = undefined;
    connection.state = 'waiting';
    this.#waiting.add(connection);
    return connection;
  }

  async #openActive(): Promise<void> {
    this.#adopt(await this.#open());
  }

  /** Where sessions are opened (host:port or socket path), for error messages. */
  get address(): string {
    return this.#source.address;
  }

  /** Bound (ms) on opening a session; also the budget of cancel requests. */
  get connectTimeoutMs(): number {
    return this.#settings.connectTimeoutMs;
  }

  #open(): Promise<LockConnection> {
    const { address } = this.#source;
    const started = this.#source.open().then((opened) =>
      LockConnection.start(
        opened,
        {
          idle: (connection) => this.#idle(connection),
          failed: (connection) => this.#forget(connection),
          keepaliveText: () => this.#settings.holds.keepaliveText(),
          broken: (connection, tokens) => this.#settings.holds.broken(connection, tokens),
        },
        this.#settings.keepalive,
      ),
    );
    const opening = settleWithin(started, this.#settings.connectTimeoutMs, (late) => {
      void late.close();
    }).catch((error: unknown) => {
      throw BackendUnavailableError.isInstance(error)
        ? error
        : new BackendUnavailableError(
            `Could not open a PostgreSQL session at ${address}: ${describeError(error)}`,
            { cause: error },
          );
    });
    this.#opening.add(opening);
    const forget = (): void => {
      this.#opening.delete(opening);
    };
    opening.then(forget, forget);
    return opening;
  }

  /** Puts a session (new, or back from a wait) among the active ones. */
  #adopt(connection: LockConnection): void {
    if (this.#closed) {
      this.#dispose(connection);
      return;
    }
    if (!connection.usable) return;
    this.#active.add(connection);
    if (connection.isEmpty) this.#idle(connection);
  }

  #idle(connection: LockConnection, delayMs = this.#settings.idleTimeoutMs): void {
    if (!this.#active.has(connection) || connection.idleTimer) return;
    connection.idleTimer = setTimeout(() => {
      connection.idleTimer = undefined;
      if (!connection.isEmpty) return; // armed again when it next becomes idle
      const idleFor = now() - connection.lastUsed;
      if (idleFor < this.#settings.idleTimeoutMs) {
        this.#idle(connection, this.#settings.idleTimeoutMs - idleFor);
      } else if (this.#active.delete(connection)) {
        this.#dispose(connection);
      }
    }, delayMs);
    connection.idleTimer.unref();
  }

  #forget(connection: LockConnection): void {
    this.#active.delete(connection);
    // A failed waiting session stays in #waiting until its wait ends (endWait frees the gate).
  }

  #dispose(connection: LockConnection): void {
    const closing = connection.close();
    this.#closing.add(closing);
    void closing.finally(() => this.#closing.delete(closing));
  }

  #assertOpen(): void {
    if (this.#closed) throw new BackendUnavailableError('The PostgreSQL lock provider is closed');
  }
}

function noop(): void {}
