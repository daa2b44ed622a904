import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './redis-clients.js';

/**
 * One pub/sub connection per node, shared by every waiter of the provider and ref-counted per
 * channel: the first waiter on a channel SUBSCRIBEs; the subscription lingers for a while after
 * the last one leaves (a lock that is waited for often is not re-subscribed on every wait).
 * Created on first use with `duplicate()`, so it is always ours to close, even for injected
 * clients, and dropped once no waiter is left (after the linger). ioredis re-subscribes after a reconnect; messages published during the gap are
 * lost, which the waiters' safety poll and expiry hints cover.
 *
 * On a Redis Cluster the subscriptions are sharded (SSUBSCRIBE, the releases SPUBLISH): each
 * lock's channel is subscribed on the node that owns the lock's slot — the node that runs its
 * release — so a message never depends on the cluster bus reaching whichever node a classic
 * subscriber happens to sit on (ioredis picks one at random and may move it).
 *
 * A message names the provider it is for (a mutex or semaphore release wakes the provider that
 * waited longest) or is '*' (everyone). One for this provider alone is published on the
 * lock's channel + ':' + the provider's id, which only this provider subscribes to (with the
 * lock's channel, in the same command), so a release wakes one process, not every subscriber.
 * Within the provider there is no thundering herd either: a message wakes every shared waiter
 * (readers) but only the longest-waiting exclusive one (mutex, writer, permit), who passes the
 * wake-up on if it leaves without the lock. A '!' wakes every waiter: a weighted semaphore's
 * release may let several in, and a waiting weighted request's reservation holds back the
 * others, so the one woken might not be the one to go.
 */
export class ReleaseSubscriber {
  readonly #source: RedisClient;
  readonly #providerId: string;
  /** `:<provider id>`: a lock's channel with it is this provider's own. */
  readonly #own: string;
  readonly #lingerMs: number;
  readonly #sharded: boolean;
  readonly #channels = new Map<string, Channel>();
  #connection: RedisClient | undefined;
  #closed = false;

  constructor(source: RedisClient, providerId: string, lingerMs: number) {
    this.#source = source;
    this.#providerId = providerId;
    this.#own = `:${providerId}`;
    this.#lingerMs = lingerMs;
    this.#sharded = isCluster(source);
  }

  /**
   * Calls `listener` on messages on `channel` from now on (every message when `shared`, else
   * in its turn among the exclusive listeners). Resolves once the server has confirmed the
   * subscription, or after `timeoutMs`: the listener is then called once when the SUBSCRIBE
   * settles late, so the waiter retries (messages before it were missed).
   */
  async add(
    channel: string,
    listener: () => void,
    timeoutMs: number,
    shared: boolean,
  ): Promise<void> {
    let known = this.#channels.get(channel);
    if (known) {
      known.listeners.set(listener, shared); // subscribed, being subscribed, or lingering
      clearTimeout(known.linger);
      known.linger = undefined;
      if (known.failed) known.subscribed = this.#subscribe(channel, known); // try again
    } else {
      known = {
        listeners: new Map([[listener, shared]]),
        subscribed: undefined,
        linger: undefined,
      };
      known.subscribed = this.#subscribe(channel, known);
      this.#channels.set(channel, known);
    }
    const channelState = known;
    const subscribed = channelState.subscribed as Promise<boolean>;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([subscribed.then(() => (settled = true)), gaveUp]);
    clearTimeout(timer);
    if (!settled) {
      // A late subscription: messages before it were missed, so wake the waiter to retry.
      void subscribed.then(() => {
        if (channelState.listeners.has(listener)) listener();
      });
    }
  }

  /**
   * Subscribes; resolves true once the server confirmed it, false if it failed (the channel
   * is then subscribed again by its next waiter, and this one relies on its safety poll).
   */
  #subscribe(channel: string, known: Channel): Promise<boolean> {
    known.failed = false;
    if (this.#closed) return Promise.resolve(true);
    const connection = this.#open() as Redis;
    const both = this.#both(channel);
    const sent = this.#sharded ? connection.ssubscribe(...both) : connection.subscribe(...both);
    return sent.then(
      () => true,
      () => {
        known.failed = true;
        return false;
      },
    );
  }

  /**
   * Stops calling `listener`. `passOn`: an exclusive listener wakes the next local one (it may
   * have taken a wake-up it never used). Returns true when it was the channel's last listener.
   */
  remove(channel: string, listener: () => void, passOn: boolean): boolean {
    const known = this.#channels.get(channel);
    const shared = known?.listeners.get(listener);
    if (!known?.listeners.delete(listener)) return false;
    if (known.listeners.size > 0) {
      if (passOn && !shared) wake(known, false);
      return false;
    }
    if (this.#closed) return true;
    known.linger = setTimeout(() => {
      if (known.listeners.size > 0 || this.#channels.get(channel) !== known) return;
      this.#channels.delete(channel);
      const connection = this.#closed ? undefined : (this.#connection as Redis | undefined);
      if (this.#channels.size === 0) {
        // Nobody waits: drop the connection, so an idle provider keeps no socket (or
        // reconnect timer) alive; the next waiter opens a new one.
        connection?.disconnect();
        this.#connection = undefined;
      } else if (this.#sharded) connection?.sunsubscribe(...this.#both(channel)).catch(noop);
      else connection?.unsubscribe(...this.#both(channel)).catch(noop);
    }, this.#lingerMs);
    known.linger.unref();
    return true;
  }

  /** Listeners of this provider on `channel`. */
  listenerCount(channel: string): number {
    return this.#channels.get(channel)?.listeners.size ?? 0;
  }

  close(): void {
    this.#closed = true;
    for (const known of this.#channels.values()) clearTimeout(known.linger);
    this.#channels.clear();
    this.#connection?.disconnect();
    this.#connection = undefined;
  }

  /** A lock's channel and this provider's own one for the lock (subscribed together). */
  #both(channel: string): [string, string] {
    return [channel, channel + this.#own];
  }

  #open(): RedisClient {
    if (this.#connection) return this.#connection;
    const overrides = {
      lazyConnect: false,
      enableOfflineQueue: true,
      autoResubscribe: true,
      maxRetriesPerRequest: null,
      // Reconnect while waiters need it (the command clients of the provider do not).
      retryStrategy: (times: number) => Math.min(times * 50, 2000),
    };
    const source = this.#source as Redis;
    const connection: RedisClient = this.#sharded
      ? (
          source as unknown as { duplicate(nodes?: unknown, options?: object): RedisClient }
        ).duplicate(undefined, { ...overrides, shardedSubscribers: true })
      : source.duplicate(overrides);
    connection.on('error', noop); // a dropped subscriber only costs wake-ups; the poll covers it
    connection.on(this.#sharded ? 'smessage' : 'message', (channel: string, message: string) => {
      const all = message === '!';
      if (message !== '*' && message !== this.#providerId && !all) return;
      const lock = channel.endsWith(this.#own) ? channel.slice(0, -this.#own.length) : channel;
      const known = this.#channels.get(lock);
      if (known) wake(known, true, all);
    });
    this.#connection = connection;
    return connection;
  }
}

interface Channel {
  /** Listener → shared, in arrival order (the first exclusive one waited longest). */
  readonly listeners: Map<() => void, boolean>;
  /** Settles true when the server confirmed the subscription, false when it failed. */
  subscribed: Promise<boolean> | undefined;
  /** The last subscribe failed: the next waiter subscribes again. */
  failed?: boolean;
  /** Pending unsubscribe after the last listener left. */
  linger: NodeJS.Timeout | undefined;
}

/** Wakes the first exclusive listener (every one with `all`), and every shared one when `shared`. */
function wake(channel: Channel, shared: boolean, all = false): void {
  let exclusiveWoken = false;
  for (const [listener, isShared] of channel.listeners) {
    if (all) listener();
    else if (isShared ? shared : !exclusiveWoken) {
      listener();
      if (!isShared) exclusiveWoken = true;
      if (exclusiveWoken && !shared) return;
    }
  }
}

function noop(): void {}
