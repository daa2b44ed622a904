import { BackendUnavailableError, now } from '@lockkit/core';
import { shutdownClient, unstickHandshake } from './client-lifecycle.js';
import {
  type CreatedNode,
  sendCreateWithZxid,
  ZkCode,
  ZkCreateMode,
  type ZooKeeperAcl,
  type ZooKeeperClient,
  type ZooKeeperEvent,
  type ZooKeeperException,
  type ZooKeeperStat,
  zkCode,
  zkLong,
} from './zookeeper-client.js';

/** Timing of one session, in ms. */
export interface SessionTiming {
  /** The session timeout lockkit asked for. */
  readonly sessionTimeoutMs: number;
  /** Deadline of every request. */
  readonly operationTimeoutMs: number;
}

/** Called once when the session can no longer vouch for its ephemeral nodes. */
export type SessionLostListener = (reason: string, cause?: unknown) => void;

/** The reply of a request that was abandoned after its deadline (so its effect is unknown). */
export type LateReply<T> = (error: ZooKeeperException | null | undefined, value: T) => void;

/**
 * One ZooKeeper session on one client: promise-returning requests with a deadline each, and
 * our own liveness. The client library alone notices neither a black-holed network nor an
 * expiry during a partition, so the session counts as lost at the first of: the `expired` or
 * `authenticationFailed` event, or no reply from the server for the (negotiated, at most the
 * requested) session timeout, measured from when the last answered request was SENT. A
 * heartbeat request every third of the session timeout keeps that clock fresh.
 */
export class ZkSession {
  readonly client: ZooKeeperClient;
  /** True when lockkit created the client (and so closes and replaces it). */
  readonly owned: boolean;
  readonly #timing: SessionTiming;
  readonly #listeners = new Set<SessionLostListener>();
  #lastHeardAt = now();
  #lost: { reason: string; cause: unknown } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Requests held until the client is connected (see the constructor). */
  readonly #gated: (() => void)[] | undefined;
  #connected = false;
  readonly #onConnected = (): void => {
    this.#lastHeardAt = now();
    this.#connected = true;
    clearTimeout(this.#handshakeTimer);
    for (const start of this.#gated?.splice(0) ?? []) start();
  };
  readonly #onDisconnected = (): void => {
    this.#connected = false;
    this.#watchHandshake();
  };
  #handshakeTimer: NodeJS.Timeout | undefined;
  readonly #onExpired = (): void => this.#lose('the ZooKeeper session expired');
  readonly #onAuthFailed = (): void => this.#lose('ZooKeeper authentication failed');

  /**
   * `holdUntilConnected`: send requests only while connected. node-zookeeper-client re-sends
   * its credentials on each (re)connect BEHIND requests queued while disconnected, so with
   * `auth` those would run unauthenticated (and fail with NO_AUTH / INVALID_ACL).
   */
  constructor(
    client: ZooKeeperClient,
    owned: boolean,
    timing: SessionTiming,
    holdUntilConnected = false,
  ) {
    this.client = client;
    this.owned = owned;
    this.#timing = timing;
    this.#gated = holdUntilConnected ? [] : undefined;
    client.on('connected', this.#onConnected);
    client.on('disconnected', this.#onDisconnected);
    client.on('expired', this.#onExpired);
    client.on('authenticationFailed', this.#onAuthFailed);
    this.#schedule();
    this.#watchHandshake();
  }

  /** Why the session was lost, or undefined while it is alive. */
  get lost(): { readonly reason: string; readonly cause: unknown } | undefined {
    return this.#lost;
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

  exists(path: string, watcher?: (event: ZooKeeperEvent) => void): Promise<ZooKeeperStat | null> {
    return this.request(`exists ${path}`, (done) => this.client.exists(path, watcher, done));
  }

  getChildren(path: string, watcher?: (event: ZooKeeperEvent) => void): Promise<string[]> {
    return this.request(`getChildren ${path}`, (done) =>
      this.client.getChildren(path, watcher, done),
    );
  }

  /** The node's data, or null when the node does not exist (then no watch is left behind). */
  async getData(path: string, watcher?: (event: ZooKeeperEvent) => void): Promise<Buffer | null> {
    try {
      const data = await this.request<Buffer | null>(`getData ${path}`, (done) =>
        this.client.getData(path, watcher, done),
      );
      return data ?? Buffer.alloc(0);
    } catch (error) {
      if (zkCode(error) === ZkCode.NO_NODE) return null;
      throw error;
    }
  }

  setData(path: string, data: Buffer): Promise<ZooKeeperStat> {
    return this.request(`setData ${path}`, (done) => this.client.setData(path, data, -1, done));
  }

  /** Creates a persistent node (a parent). */
  create(path: string, acl: ZooKeeperAcl[]): Promise<string> {
    return this.request(`create ${path}`, (done) =>
      this.client.create(path, undefined, acl, ZkCreateMode.PERSISTENT, done),
    );
  }

  /** Creates an ephemeral-sequential node; resolves its path and `czxid`. */
  createEphemeralSequential(
    path: string,
    acl: ZooKeeperAcl[],
    onLate?: LateReply<CreatedNode | undefined>,
  ): Promise<CreatedNode> {
    const mode = ZkCreateMode.EPHEMERAL_SEQUENTIAL;
    return this.request<CreatedNode | undefined>(
      `create ${path}`,
      (done) => {
        if (sendCreateWithZxid(this.client, path, acl, mode, done)) return;
        // A client without the library's internals: create, then read the stat.
        this.client.create(path, undefined, acl, mode, (error, created) => {
          if (error) return done(error, undefined);
          this.client.exists(created, undefined, (statError, stat) =>
            done(
              statError ?? (stat ? null : noNodeError(created)),
              stat ? { path: created, czxid: zkLong(stat.czxid) } : undefined,
            ),
          );
        });
      },
      onLate,
    ) as Promise<CreatedNode>;
  }

  /** Deletes `path`: true if it existed, false if it did not (or, for a parent, had children). */
  async remove(path: string): Promise<boolean> {
    try {
      await this.request<undefined>(`remove ${path}`, (done) =>
        this.client.remove(path, -1, (error) => done(error, undefined)),
      );
      return true;
    } catch (error) {
      const code = zkCode(error);
      if (code === ZkCode.NO_NODE || code === ZkCode.NOT_EMPTY) return false;
      throw error;
    }
  }

  /**
   * Sends one request with a deadline. Rejects with the library's exception (ZooKeeper's
   * error code in `code`) or, after the deadline, a `BackendUnavailableError`; a reply that
   * arrives after the deadline goes to `onLate`.
   */
  request<T>(
    what: string,
    start: (done: (error: ZooKeeperException | null | undefined, value: T) => void) => void,
    onLate?: LateReply<T>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let sentAt = now();
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        reject(
          new BackendUnavailableError(
            `ZooKeeper did not answer ${what} within ${this.#timing.operationTimeoutMs} ms`,
          ),
        );
      }, this.#timing.operationTimeoutMs);
      timer.unref();
      const send = (): void => {
        if (settled) return;
        sentAt = now();
        try {
          start(reply);
        } catch (error) {
          settled = true;
          clearTimeout(timer);
          reject(error);
        }
      };
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
        if (error) reject(error);
        else resolve(value);
      };
      if (this.#gated && !this.#connected) this.#gated.push(send);
      else send();
    });
  }

  /** Stops the heartbeat and detaches from the client; closes it if lockkit owns it. */
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
      () => this.#connected || this.#stopped || this.#lost !== undefined,
      (timer) => {
        this.#handshakeTimer = timer;
      },
    );
  }

  #heard(sentAt: number): void {
    if (sentAt > this.#lastHeardAt) this.#lastHeardAt = sentAt;
  }

  #lose(reason: string, cause?: unknown): void {
    if (this.#lost || this.#stopped) return;
    this.#lost = { reason, cause };
    clearTimeout(this.#timer);
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
      this.request('heartbeat', (done) => this.client.exists('/', undefined, done)).catch(noop);
    }
    const next = Math.min(interval, this.#lastHeardAt + timeout - now());
    this.#timer = setTimeout(() => this.#schedule(), Math.max(1, next));
    this.#timer.unref();
  }
}

function noop(): void {}

function noNodeError(path: string): ZooKeeperException {
  return Object.assign(new Error(`${path} vanished right after its create`), {
    code: ZkCode.NO_NODE,
  });
}
