import { BackendUnavailableError } from '@lockkit/core';
import { now } from '@lockkit/core/backend';
import {
  guardSocketData,
  isConnected,
  onConnectFailure,
  refSocket,
  serverCountOf,
  shutdownClient,
  unstickHandshake,
} from './client-lifecycle.js';
import { ConnectionGate } from './connection-gate.js';
import { type LateReply, ZkOperations } from './zk-operations.js';
import {
  ZkCode,
  type ZooKeeperClient,
  type ZooKeeperException,
  zkCode,
  zookeeperModule,
} from './zookeeper-client.js';

/** Timing of one session, in ms. */
export interface SessionTiming {
  /** The session timeout lockkit asked for. */
  readonly sessionTimeoutMs: number;
  /** Deadline of every request (waiting for a connection included). */
  readonly operationTimeoutMs: number;
  /** How long a request waits for a connection (≤ operationTimeoutMs). */
  readonly connectTimeoutMs: number;
}

/** Called once when the session can no longer vouch for its ephemeral nodes. */
export type SessionLostListener = (reason: string, cause?: unknown) => void;

export type { LateReply } from './zk-operations.js';

/**
 * One ZooKeeper session on one client: promise-returning requests with a deadline each, and
 * our own liveness. The client library alone notices neither a black-holed network nor an
 * expiry during a partition, so the session counts as lost at the first of: the `expired` or
 * `authenticationFailed` event, or no reply from the server for the (negotiated, at most the
 * requested) session timeout, measured from when the last answered request was SENT. A
 * heartbeat request every third of the session timeout keeps that clock fresh.
 */
export class ZkSession extends ZkOperations {
  readonly client: ZooKeeperClient;
  /** True when lockkit created the client (and so closes and replaces it). */
  readonly owned: boolean;
  /** The connect string (host:port[,…][/chroot]). */
  readonly address: string;
  readonly #timing: SessionTiming;
  readonly #listeners = new Set<SessionLostListener>();
  #lastHeardAt = now();
  #lost: { reason: string; cause: unknown } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** When a request last went unanswered until its deadline. */
  #timedOutAt = Number.NEGATIVE_INFINITY;
  /** Requests are sent only while connected (see {@link ConnectionGate}). */
  readonly #gate: ConnectionGate;
  /** Requests sent and not yet answered, failed by `stop()`. */
  readonly #pending = new Set<(error: unknown) => void>();
  /** False while the provider is idle: the socket then does not keep the process alive. */
  #keepAlive = true;
  #onIdleOffline: (() => void) | undefined;
  readonly #onConnected = (): void => {
    this.#lastHeardAt = now();
    clearTimeout(this.#handshakeTimer);
    if (this.owned && !this.#keepAlive) refSocket(this.client, false);
    this.#gate.opened();
  };
  readonly #onDisconnected = (): void => {
    this.#gate.closed();
    if (!this.#keepAlive) this.#onIdleOffline?.();
    this.#watchHandshake();
  };
  #handshakeTimer: NodeJS.Timeout | undefined;
  readonly #onExpired = (): void => this.#lose('the ZooKeeper session expired');
  readonly #onAuthFailed = (): void =>
    this.#lose(
      `ZooKeeper at ${this.address} refused the credentials`,
      zookeeperModule().Exception.create(ZkCode.AUTH_FAILED),
    );

  /**
   * Requests are sent only while connected: node-zookeeper-client would queue them forever
   * while it reconnects, and it re-sends its credentials on each (re)connect BEHIND requests
   * queued while disconnected (with `auth`, those would run unauthenticated). `address` is
   * the connect string, for messages. An owned client must not have connected yet.
   */
  constructor(client: ZooKeeperClient, owned: boolean, timing: SessionTiming, address: string) {
    super();
    this.client = client;
    this.owned = owned;
    this.address = address;
    this.#timing = timing;
    const { connectTimeoutMs } = timing;
    const serverCount = serverCountOf(client);
    this.#gate = new ConnectionGate(
      { address, connectTimeoutMs, serverCount },
      isConnected(client),
    );
    if (owned) {
      onConnectFailure(client, (error) => this.#gate.attemptFailed(error));
      guardSocketData(client);
    }
    client.on('connected', this.#onConnected);
    client.on('disconnected', this.#onDisconnected);
    client.on('expired', this.#onExpired);
    client.on('authenticationFailed', this.#onAuthFailed);
    this.#schedule();
    this.#watchHandshake();
  }

  /** How many times the client (re)connected (see {@link ConnectionGate.connections}). */
  get connections(): number {
    return this.#gate.connections;
  }

  /** Why the session was lost, or undefined while it is alive. */
  get lost(): { readonly reason: string; readonly cause: unknown } | undefined {
    return this.#lost;
  }

  /** Connected, not lost, and no request went unanswered since the last reply. */
  get responsive(): boolean {
    return this.#gate.connected && !this.#lost && this.#timedOutAt <= this.#lastHeardAt;
  }

  /**
   * Whether the session keeps the process alive (an owned client's socket is referenced).
   * While not, a dropped connection calls `onOffline` (the caller ends the session).
   */
  keepAlive(keep: boolean, onOffline: () => void): void {
    this.#keepAlive = keep;
    this.#onIdleOffline = onOffline;
    if (!this.owned) return;
    if (this.#gate.connected) refSocket(this.client, keep);
    else if (!keep) onOffline();
  }

  /** The effective session timeout: the negotiated one, never more than requested. */
  get timeoutMs(): number {
    const negotiated = this.client.getSessionTimeout();
    const requested = this.#timing.sessionTimeoutMs;
    return negotiated > 0 ? Math.min(negotiated, requested) : requested;
  }

  /** The session id (valid once connected). */
  get sessionId(): Buffer {
    return this.client.getSessionId();
  }

  /** Calls `listener` once when the session is lost (at once, asynchronously, if it is). */
  onLost(listener: SessionLostListener): () => void {
    const lost = this.#lost;
    if (lost) {
      queueMicrotask(() => listener(lost.reason, lost.cause));
      return () => {};
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Declares the session lost now (e.g. a fault hook, or the provider gave up on it). */
  markLost(reason: string, cause?: unknown): void {
    this.#lose(reason, cause);
  }

  /**
   * Sends one request (once connected) with a deadline. Rejects with the library's exception
   * (ZooKeeper's error code in `code`) or a `BackendUnavailableError` (no connection, no
   * reply in time, the session ended); a reply that arrives after the deadline goes to
   * `onLate`.
   */
  override request<T>(
    what: string,
    start: (done: (error: ZooKeeperException | null | undefined, value: T) => void) => void,
    onLate?: LateReply<T>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let sentAt = now();
      let settled = false;
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#pending.delete(fail);
        reject(error);
      };
      const { operationTimeoutMs } = this.#timing;
      const timer = setTimeout(() => {
        if (this.#gate.connected) this.#timedOutAt = now();
        const cause = zookeeperModule().Exception.create(ZkCode.OPERATION_TIMEOUT);
        const message = `ZooKeeper at ${this.address} did not answer ${what} within ${operationTimeoutMs} ms`;
        fail(new BackendUnavailableError(message, { cause }));
      }, operationTimeoutMs);
      timer.unref();
      const reply = (error: ZooKeeperException | null | undefined, value: T): void => {
        const code = zkCode(error);
        if (!error || (code !== ZkCode.CONNECTION_LOSS && code !== ZkCode.SESSION_EXPIRED)) {
          this.#heard(sentAt);
        }
        if (settled) {
          onLate?.(error, value);
          return;
        }
        settled = true;
        clearTimeout(timer);
        this.#pending.delete(fail);
        if (error) reject(error);
        else resolve(value);
      };
      this.#gate.pass(() => {
        if (settled) return;
        sentAt = now();
        this.#pending.add(fail);
        try {
          start(reply);
        } catch (error) {
          fail(error);
        }
      }, fail);
    });
  }

  /**
   * Stops the heartbeat, fails what is still pending, detaches from the client and closes it
   * if lockkit owns it (giving a connected server `closeTimeoutMs` to end the session).
   */
  async stop(closeTimeoutMs: number): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#handshakeTimer);
    this.#listeners.clear();
    this.client.removeListener('connected', this.#onConnected);
    this.client.removeListener('disconnected', this.#onDisconnected);
    this.client.removeListener('expired', this.#onExpired);
    this.client.removeListener('authenticationFailed', this.#onAuthFailed);
    const closed = this.#ended();
    this.#gate.failAll(closed);
    for (const fail of [...this.#pending]) fail(closed);
    if (this.owned) await shutdownClient(this.client, closeTimeoutMs);
  }

  /** Owned clients only: see {@link unstickHandshake}. */
  #watchHandshake(): void {
    if (!this.owned || this.#stopped) return;
    clearTimeout(this.#handshakeTimer);
    const periodMs = Math.max(250, Math.min(2000, this.timeoutMs / 3));
    this.#handshakeTimer = unstickHandshake(
      this.client,
      periodMs,
      () => this.#gate.connected || this.#stopped || this.#lost !== undefined,
      (timer) => {
        this.#handshakeTimer = timer;
      },
    );
  }

  /** What a request gets when the session ended under it (lost, or closed by lockkit). */
  #ended(): BackendUnavailableError {
    const reason = this.#lost?.reason ?? 'the ZooKeeper session was closed';
    const message = reason.includes(this.address) ? reason : `${reason} (${this.address})`;
    return new BackendUnavailableError(message, { cause: this.#lost?.cause ?? new Error(reason) });
  }

  #heard(sentAt: number): void {
    if (sentAt > this.#lastHeardAt) this.#lastHeardAt = sentAt;
  }

  #lose(reason: string, cause?: unknown): void {
    if (this.#lost || this.#stopped) return;
    this.#lost = { reason, cause };
    clearTimeout(this.#timer);
    this.#gate.failAll(this.#ended());
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener(reason, cause);
  }

  /** Heartbeat and silence deadline: one timer, re-armed after every tick. */
  #schedule(): void {
    if (this.#lost || this.#stopped) return;
    const timeout = this.timeoutMs;
    const interval = timeout / 3;
    const silentFor = now() - this.#lastHeardAt;
    if (silentFor >= timeout) {
      this.#lose(`no reply from ZooKeeper within the session timeout (${timeout} ms)`);
      return;
    }
    if (silentFor >= interval) {
      this.request('heartbeat', (done) => this.client.exists('/', undefined, done)).catch(() => {});
    }
    const next = Math.min(interval, this.#lastHeardAt + timeout - now());
    this.#timer = setTimeout(() => this.#schedule(), Math.max(1, next));
    this.#timer.unref();
  }
}
