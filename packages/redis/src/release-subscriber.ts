import type { Redis } from 'ioredis';
import type { RedisClient } from './redis-node.js';

/**
 * One pub/sub connection per node, shared by every waiter of the provider and ref-counted per
 * channel: the first waiter on a channel SUBSCRIBEs; the subscription lingers for a while after
 * the last one leaves (a lock that is waited for often is not re-subscribed on every wait).
 * Created on first use with `duplicate()`, so it is always ours to close, even for injected
 * clients. ioredis re-subscribes after a reconnect; messages published during the gap are
 * lost, which the waiters' safety poll and expiry hints cover.
 *
 * A message names the provider it is for (a mutex or semaphore release wakes the provider that
 * waited longest) or is '*' (everyone). Within the provider there is no thundering herd either:
 * a message wakes every shared waiter (readers) but only the longest-waiting exclusive one
 * (mutex, writer, permit), who passes the wake-up on if it leaves without the lock.
 */
export class ReleaseSubscriber {
  readonly #source: RedisClient;
  readonly #providerId: string;
  readonly #lingerMs: number;
  readonly #channels = new Map<string, Channel>();
  #connection: RedisClient | undefined;
  #closed = false;

  constructor(source: RedisClient, providerId: string, lingerMs: number) {
    this.#source = source;
    this.#providerId = providerId;
    this.#lingerMs = lingerMs;
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
    } else {
      const subscribed = this.#closed
        ? Promise.resolve()
        : this.#open().subscribe(channel).then(noop, noop);
      known = { listeners: new Map([[listener, shared]]), subscribed, linger: undefined };
      this.#channels.set(channel, known);
    }
    const channelState = known;
    let confirmed = false;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    const settled = channelState.subscribed.then(() => {
      confirmed = true;
    });
    await Promise.race([settled, gaveUp]);
    clearTimeout(timer);
    if (!confirmed) {
      // A late subscription: messages before it were missed, so wake the waiter to retry.
      void channelState.subscribed.then(() => {
        if (channelState.listeners.has(listener)) listener();
      });
    }
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
      if (this.#connection && !this.#closed) this.#connection.unsubscribe(channel).catch(noop);
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

  #open(): RedisClient {
    if (this.#connection) return this.#connection;
    const overrides = {
      lazyConnect: false,
      enableOfflineQueue: true,
      autoResubscribe: true,
      maxRetriesPerRequest: null,
    };
    const source = this.#source as Redis;
    const connection: RedisClient =
      'isCluster' in source && source.isCluster
        ? (
            source as unknown as { duplicate(nodes?: unknown, options?: object): RedisClient }
          ).duplicate(undefined, overrides)
        : source.duplicate(overrides);
    connection.on('error', noop); // a dropped subscriber only costs wake-ups; the poll covers it
    connection.on('message', (channel: string, message: string) => {
      if (message !== '*' && message !== this.#providerId) return;
      const known = this.#channels.get(channel);
      if (known) wake(known, true);
    });
    this.#connection = connection;
    return connection;
  }
}

interface Channel {
  /** Listener → shared, in arrival order (the first exclusive one waited longest). */
  readonly listeners: Map<() => void, boolean>;
  readonly subscribed: Promise<void>;
  /** Pending unsubscribe after the last listener left. */
  linger: NodeJS.Timeout | undefined;
}

/** Wakes the first exclusive listener, and every shared one when `shared`. */
function wake(channel: Channel, shared: boolean): void {
  let exclusiveWoken = false;
  for (const [listener, isShared] of channel.listeners) {
    if (isShared ? shared : !exclusiveWoken) {
      listener();
      if (!isShared) exclusiveWoken = true;
      if (exclusiveWoken && !shared) return;
    }
  }
}

function noop(): void {}
