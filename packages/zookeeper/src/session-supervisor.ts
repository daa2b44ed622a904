import { BackendUnavailableError } from '@lockkit/core';
import { connectionStringOf } from './client-lifecycle.js';
import { type SessionTiming, ZkSession } from './zk-session.js';
import { ZkManagerState, type ZooKeeperClient, zookeeperModule } from './zookeeper-client.js';

/** Where sessions come from: a connection string (lockkit owns the clients) or a client. */
export interface SessionSource {
  readonly connectionString?: string | undefined;
  readonly client?: ZooKeeperClient | undefined;
  readonly auth: readonly { readonly scheme: string; readonly auth: Buffer }[];
  readonly timing: SessionTiming;
  readonly spinDelayMs: number;
}

/**
 * Hands out the current session. A lost session is retired (its client closed, when lockkit
 * owns it) and the next call transparently connects a new client, so new acquires keep
 * working after an expiry. An injected client cannot be replaced: after it expired every
 * request fails with `BackendUnavailableError`.
 *
 * It also keeps the process alive only while there is work: {@link use} marks an attempt or
 * a hold. While nothing is in use, an owned client's socket does not hold the event loop
 * open, and a client that loses its connection is closed rather than left reconnecting; the
 * next acquire connects again.
 */
export class SessionSupervisor {
  readonly #source: SessionSource;
  readonly #retiring = new Set<Promise<void>>();
  readonly address: string;
  #current: ZkSession | undefined;
  #closed = false;
  #uses = 0;

  constructor(source: SessionSource) {
    this.#source = source;
    this.address =
      source.connectionString ??
      (source.client && connectionStringOf(source.client)) ??
      'the injected client';
  }

  /** The live session, connecting a new one if there is none. */
  current(): ZkSession {
    if (this.#closed) {
      throw new BackendUnavailableError(`the ZooKeeper provider for ${this.address} is closed`);
    }
    const existing = this.#current;
    if (existing && !existing.lost) return existing;
    const session = this.#open();
    this.#current = session;
    session.onLost(() => this.#retire(session, 0));
    this.#applyUse(session);
    return session;
  }

  /** The current session if one is open (for fault hooks and diagnostics). */
  peek(): ZkSession | undefined {
    return this.#current;
  }

  /** Marks work in progress (an attempt, a hold) until the returned function is called. */
  use(): () => void {
    this.#uses++;
    if (this.#uses === 1 && this.#current) this.#applyUse(this.#current);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#uses--;
      if (this.#uses === 0 && this.#current) this.#applyUse(this.#current);
    };
  }

  /**
   * Stops every session and closes owned clients (never an injected one); a connected
   * session gets `graceMs` to be closed on the server.
   */
  async close(graceMs: number): Promise<void> {
    this.#closed = true;
    const current = this.#current;
    this.#current = undefined;
    if (current) this.#retire(current, current.responsive ? graceMs : 0);
    while (this.#retiring.size > 0) await Promise.all(this.#retiring);
  }

  #applyUse(session: ZkSession): void {
    session.keepAlive(this.#uses > 0, () => {
      if (this.#uses === 0 && this.#current === session) this.#retire(session, 0);
    });
  }

  #open(): ZkSession {
    const { client, connectionString, auth, timing, spinDelayMs } = this.#source;
    if (client) {
      const state = (client as unknown as { connectionManager?: { state?: number } })
        .connectionManager?.state;
      if (state === ZkManagerState.CLOSED || state === ZkManagerState.SESSION_EXPIRED) {
        throw new BackendUnavailableError(
          `the injected ZooKeeper client (${this.address}) is closed or its session expired; create a new client and provider`,
        );
      }
      return new ZkSession(client, false, timing, this.address);
    }
    const created = zookeeperModule().createClient(connectionString as string, {
      sessionTimeout: timing.sessionTimeoutMs,
      spinDelay: spinDelayMs,
      retries: 0, // never re-send a create blindly: protected create finds it instead
    });
    for (const entry of auth) created.addAuthInfo(entry.scheme, entry.auth);
    const session = new ZkSession(created, true, timing, this.address);
    created.connect();
    return session;
  }

  #retire(session: ZkSession, graceMs: number): void {
    if (this.#current === session) this.#current = undefined;
    const stopping = session.stop(graceMs).catch(() => undefined);
    this.#retiring.add(stopping);
    void stopping.finally(() => this.#retiring.delete(stopping));
  }
}
