import { type ReleaseWatch, Wakeup } from '@lockkit/core/backend';
import pg from 'pg';
import { channel } from './lease-sql.js';

/**
 * One LISTEN connection per provider, shared by every waiting acquire. A release notifies the
 * key; each watch of that key latches the notification in a core `Wakeup`. If the connection
 * drops, every watch is woken (its acquire retries at once) and the next `watch()` reconnects.
 */
export class ReleaseListener {
  readonly #config: pg.ClientConfig;
  readonly #unavailable: (cause: unknown) => Error;
  readonly #watches = new Map<string, Set<Wakeup>>();
  #client: pg.Client | undefined;
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(config: pg.ClientConfig, unavailable: (cause: unknown) => Error) {
    this.#config = config;
    this.#unavailable = unavailable;
  }

  /** Resolves once notifications for `key` are being received (subscribe-then-retry). */
  async watch(key: string): Promise<ReleaseWatch> {
    await this.#connect();
    const wakeup = new Wakeup();
    let set = this.#watches.get(key);
    if (!set) {
      set = new Set();
      this.#watches.set(key, set);
    }
    set.add(wakeup);
    const watches = this.#watches;
    return {
      next: (signal) => wakeup.next(signal),
      close: () => {
        set.delete(wakeup);
        if (set.size === 0 && watches.get(key) === set) watches.delete(key);
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#ready = undefined;
    await client?.end().catch(() => undefined);
    this.#client = undefined;
  }

  /** Drops the connection at once (close() on a server that does not answer). */
  destroy(): void {
    this.#client?.connection.stream.destroy();
  }

  #connect(): Promise<void> {
    if (this.#closed) return Promise.reject(this.#unavailable(new Error('provider closed')));
    this.#ready ??= this.#open();
    return this.#ready;
  }

  async #open(): Promise<void> {
    const client = new pg.Client(this.#config);
    this.#client = client;
    const lost = (): void => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#ready = undefined;
      for (const set of this.#watches.values()) for (const wakeup of set) wakeup.notify();
      void client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      for (const wakeup of this.#watches.get(message.payload ?? '') ?? []) wakeup.notify();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      lost();
      throw this.#unavailable(error);
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      throw this.#unavailable(new Error('provider closed'));
    }
  }
}
