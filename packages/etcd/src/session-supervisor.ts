import { now } from '@lockkit/core/backend';
import { type EtcdConnection, unavailable } from './etcd-connection.js';
import { LeaseSession } from './lease-session.js';

/** What the supervisor needs to grant sessions. */
export interface SessionSettings {
  readonly sessionTtlMs: number;
  readonly commandTimeoutMs: number;
}

/**
 * Hands out the provider's current session, granting a lease on first use and again after a
 * session was lost (concurrent callers share one grant). It also counts the work in progress
 * ({@link use}: an attempt or a hold) so that the session keeps the process alive only while
 * there is some.
 */
export class SessionSupervisor {
  readonly #connection: EtcdConnection;
  readonly #settings: SessionSettings;
  #current: LeaseSession | undefined;
  #granting: Promise<LeaseSession> | undefined;
  #uses = 0;
  #closed = false;
  /** A hold was exported from a session: close() lets the lease run out, not revoke it. */
  #keep = false;

  constructor(connection: EtcdConnection, settings: SessionSettings) {
    this.#connection = connection;
    this.#settings = settings;
  }

  /** The endpoints, for error messages. */
  get address(): string {
    return this.#connection.address;
  }

  /** The current session if there is one (for fault hooks and `close()`). */
  peek(): LeaseSession | undefined {
    return this.#current;
  }

  /** The live session, granting a new lease (by `deadline`) if there is none. */
  async current(deadline: number): Promise<LeaseSession> {
    if (this.#closed)
      throw unavailable('acquire', new Error('the provider is closed'), this.address);
    const existing = this.#current;
    if (existing && !existing.lost) return existing;
    this.#granting ??= this.#grant(deadline).finally(() => {
      this.#granting = undefined;
    });
    return this.#granting;
  }

  /** An exported key is on the current lease: close() must not delete it with the lease. */
  keepOnClose(): void {
    this.#keep = true;
  }

  /** Marks work in progress (an attempt, a hold) until the returned function is called. */
  use(): () => void {
    this.#uses++;
    if (this.#uses === 1) this.#current?.setInUse(true);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#uses--;
      if (this.#uses === 0) this.#current?.setInUse(false);
    };
  }

  /**
   * Ends the current session: revokes its lease (deleting every key left on it) when etcd
   * answered the last request, within `deadline`; otherwise the lease runs out on its own.
   */
  async close(deadline: number): Promise<void> {
    this.#closed = true;
    await this.#granting?.catch(() => undefined);
    const session = this.#current;
    this.#current = undefined;
    if (!session) return;
    if (session.lost || !session.responsive || now() >= deadline || this.#keep) {
      session.lose('the provider was closed', new Error('provider closed'));
      return;
    }
    await session.revoke(deadline).catch(() => undefined);
  }

  async #grant(deadline: number): Promise<LeaseSession> {
    let session: LeaseSession;
    try {
      session = await LeaseSession.grant(
        this.#connection.client,
        this.#settings.sessionTtlMs,
        this.#settings.commandTimeoutMs,
        deadline,
      );
    } catch (error) {
      throw unavailable('lease grant', error, this.address);
    }
    if (this.#closed) {
      // Granted as the provider closed: give the lease back (it expires anyway).
      void session.revoke(now() + this.#settings.commandTimeoutMs).catch(() => undefined);
      throw unavailable('acquire', new Error('the provider is closed'), this.address);
    }
    session.setInUse(this.#uses > 0);
    session.onLost(() => {
      if (this.#current === session) this.#current = undefined;
    });
    this.#current = session;
    return session;
  }
}
