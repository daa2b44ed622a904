/**
 * A provider's session: one etcd lease that every key of the provider is attached to, kept
 * alive every third of its TTL. The session is lost when etcd says the lease is gone, or when
 * no keepalive was answered for so long that the server may have expired it: the validity of
 * the lease is measured from when the last answered keepalive was *sent*, so lockkit gives up
 * on it no later than the server can.
 *
 * @module
 */
import { now } from '@lockkit/core/backend';
import { type Etcd3, EtcdLeaseInvalidError, type ILeaseKeepAliveResponse } from 'etcd3';
import { until } from './etcd-connection.js';

/** Why a session ended. */
export interface SessionLoss {
  readonly reason: string;
  readonly cause: unknown;
}

type LossListener = (reason: string, cause: unknown) => void;

/** One keepalive on a stream of its own, answered by the lease's remaining TTL in seconds. */
async function keepAliveOnce(client: Etcd3, leaseId: string, deadline: number): Promise<number> {
  const stream = await client.leaseClient.leaseKeepAlive(until(deadline));
  return new Promise<number>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
    };
    stream.on('data', (response: ILeaseKeepAliveResponse) => {
      settle(() => resolve(Number(response.TTL)));
      stream.end();
    });
    stream.on('error', (error: Error) => settle(() => reject(error)));
    stream.on('end', () =>
      settle(() => reject(new Error('the keepalive stream ended unanswered'))),
    );
    stream.write({ ID: leaseId });
  });
}

/** A granted lease and its keepalive loop. */
export class LeaseSession {
  /** The lease ID, as etcd writes it (decimal). */
  readonly id: string;
  /** The TTL etcd granted, in ms (etcd may raise the one asked for). */
  readonly ttlMs: number;
  readonly #client: Etcd3;
  readonly #commandTimeoutMs: number;
  readonly #listeners = new Set<LossListener>();
  #validUntil: number;
  #timer: NodeJS.Timeout | undefined;
  #inUse = false;
  #lost: SessionLoss | undefined;
  #lastError: unknown;
  #responsive = true;

  private constructor(
    client: Etcd3,
    id: string,
    ttlMs: number,
    validUntil: number,
    commandTimeoutMs: number,
  ) {
    this.#client = client;
    this.id = id;
    this.ttlMs = ttlMs;
    this.#validUntil = validUntil;
    this.#commandTimeoutMs = commandTimeoutMs;
  }

  /** Grants a lease of `ttlMs` (whole seconds) and starts keeping it alive. */
  static async grant(
    client: Etcd3,
    ttlMs: number,
    commandTimeoutMs: number,
    deadline: number,
  ): Promise<LeaseSession> {
    const sentAt = now();
    const granted = await client.leaseClient.leaseGrant({ TTL: ttlMs / 1000 }, until(deadline));
    if (granted.error) throw new Error(`etcd refused the lease: ${granted.error}`);
    const grantedMs = Number(granted.TTL) * 1000;
    const session = new LeaseSession(
      client,
      granted.ID,
      grantedMs,
      sentAt + grantedMs,
      commandTimeoutMs,
    );
    session.#schedule(sentAt + grantedMs / 3);
    return session;
  }

  /** Set once the session is gone; every key of the lease is then gone or going. */
  get lost(): SessionLoss | undefined {
    return this.#lost;
  }

  /** False while the last request to etcd on this session failed. */
  get responsive(): boolean {
    return this.#responsive;
  }

  /** Records whether a request on this session reached etcd. */
  answered(reached: boolean): void {
    this.#responsive = reached;
  }

  /** Calls `listener` once when the session is lost. Returns the unsubscribe function. */
  onLost(listener: LossListener): () => void {
    if (this.#lost) {
      const { reason, cause } = this.#lost;
      queueMicrotask(() => listener(reason, cause));
      return () => undefined;
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Whether locks are held or awaited on this session: only then does its keepalive timer
   * keep the process alive (an idle provider lets a script end without `close()`).
   */
  setInUse(inUse: boolean): void {
    this.#inUse = inUse;
    if (inUse) this.#timer?.ref();
    else this.#timer?.unref();
  }

  /** Ends the session here (keepalives stop) and tells every listener. */
  lose(reason: string, cause: unknown): void {
    if (this.#lost) return;
    this.#lost = { reason, cause };
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener(reason, cause);
  }

  /** Revokes the lease, which deletes every key attached to it at once. */
  async revoke(deadline: number): Promise<void> {
    this.lose('the provider closed its session', new Error('session closed'));
    await this.#client.leaseClient.leaseRevoke({ ID: this.id }, until(deadline));
  }

  #schedule(at: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#keepAlive(), Math.max(0, at - now()));
    if (!this.#inUse) this.#timer.unref();
  }

  async #keepAlive(): Promise<void> {
    this.#timer = undefined;
    if (this.#lost) return;
    const sentAt = now();
    if (sentAt >= this.#validUntil) {
      this.lose('no keepalive of the etcd lease was answered within its TTL', this.#lastError);
      return;
    }
    let ttlSeconds: number;
    try {
      // A keepalive stuck on a member that stopped answering (or behind a lost leader) gives
      // way to the next one, sent to another member, well before the lease runs out.
      const timeoutMs = Math.min(this.#commandTimeoutMs, this.ttlMs / 3);
      const deadline = Math.min(sentAt + timeoutMs, this.#validUntil);
      ttlSeconds = await keepAliveOnce(this.#client, this.id, deadline);
    } catch (error) {
      this.#lastError = error;
      this.#responsive = false;
      if (this.#lost) return;
      // Try again soon: the lease is still valid until #validUntil.
      this.#schedule(Math.min(now() + Math.min(250, this.ttlMs / 10), this.#validUntil));
      return;
    }
    if (this.#lost) return;
    this.#responsive = true;
    if (!(ttlSeconds > 0)) {
      this.lose('the etcd lease expired or was revoked', new EtcdLeaseInvalidError(this.id));
      return;
    }
    this.#validUntil = Math.max(this.#validUntil, sentAt + ttlSeconds * 1000);
    this.#schedule(sentAt + this.ttlMs / 3);
  }
}
