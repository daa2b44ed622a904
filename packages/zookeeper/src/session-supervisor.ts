import { BackendUnavailableError } from '@lockkit/core';
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
 */
export class SessionSupervisor {
  readonly #source: SessionSource;
  readonly #retiring = new Set<Promise<void>>();
  #current: ZkSession | undefined;
  #closed = false;

  constructor(source: SessionSource) {
    this.#source = source;
  }

  /** The live session, connecting a new one if there is none. */
  current(): ZkSession {
    if (this.#closed) throw new BackendUnavailableError('the ZooKeeper provider is closed');
    const existing = this.#current;
    if (existing && !existing.lost) return existing;
    const session = this.#open();
    this.#current = session;
    session.onLost(() => this.#retire(session));
    return session;
  }

  /** The current session if one is open (for fault hooks and diagnostics). */
  peek(): ZkSession | undefined {
    return this.#current;
  }

  /** Stops every session and closes owned clients (never an injected one). */
  async close(): Promise<void> {
    this.#closed = true;
    const current = this.#current;
    this.#current = undefined;
    if (current) this.#retire(current);
    while (this.#retiring.size > 0) await Promise.all(this.#retiring);
  }

  #open(): ZkSession {
    const { client, connectionString, auth, timing, spinDelayMs } = this.#source;
    if (client) {
      const state = (client as unknown as { connectionManager?: { state?: number } })
        .connectionManager?.state;
      if (state === ZkManagerState.CLOSED || state === ZkManagerState.SESSION_EXPIRED) {
        throw new BackendUnavailableError(
          'the injected ZooKeeper client is closed or its session expired; create a new client and provider',
        );
      }
      return new ZkSession(client, false, timing);
    }
    const created = zookeeperModule().createClient(connectionString as string, {
      sessionTimeout: timing.sessionTimeoutMs,
      spinDelay: spinDelayMs,
      retries: 0, // never re-send a create blindly: protected create finds it instead
    });
    for (const entry of auth) created.addAuthInfo(entry.scheme, entry.auth);
    const session = new ZkSession(created, true, timing, auth.length > 0);
    created.connect();
    return session;
  }

  #retire(session: ZkSession): void {
    if (this.#current === session) this.#current = undefined;
    const stopping = session
      .stop(Math.min(this.#source.timing.operationTimeoutMs, 2000))
      .catch(() => undefined);
    this.#retiring.add(stopping);
    void stopping.finally(() => this.#retiring.delete(stopping));
  }
}
