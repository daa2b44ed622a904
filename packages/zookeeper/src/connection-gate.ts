import { BackendUnavailableError } from '@lockkit/core';

/** What a {@link ConnectionGate} needs to know about the client. */
export interface GateOptions {
  /** The connect string, for messages. */
  readonly address: string;
  /** How long a request waits for a connection. */
  readonly connectTimeoutMs: number;
  /** How many servers the client tries in turn. */
  readonly serverCount: number;
}

interface Waiter {
  readonly send: () => void;
  readonly fail: (error: unknown) => void;
  readonly failuresAtStart: number;
  readonly timer: NodeJS.Timeout;
}

/**
 * Holds requests until the client is connected, so that none of them waits in the client
 * library's queue, where nothing would ever fail it (the library reconnects forever). A
 * request waiting here fails with `BackendUnavailableError`, the client's own error as
 * `cause`:
 * - after `connectTimeoutMs` without a connection (a server that accepts connections but does
 *   not answer, a black-holed address);
 * - at once when a client that never connected has seen a connection attempt to every
 *   server fail (refused, unknown host) since the request came: nothing is listening there.
 * A client that was connected before (a server restart) is given the whole connect timeout
 * to come back, so its waits and holds survive a short outage.
 */
export class ConnectionGate {
  readonly #options: GateOptions;
  readonly #waiting = new Set<Waiter>();
  #connected = false;
  #connections = 0;
  #everConnected = false;
  #failures = 0;
  #lastError: Error | undefined;

  constructor(options: GateOptions, connected: boolean) {
    this.#options = options;
    this.#connected = connected;
    this.#everConnected = connected;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /**
   * How many times the client (re)connected. One connection delivers watch events in the
   * server's order; after a reconnect the server replays missed ones grouped by kind of
   * watch, not in the order things happened.
   */
  get connections(): number {
    return this.#connections;
  }

  /** Runs `send` once connected (now, if it is); `fail` gets the error if that never happens. */
  pass(send: () => void, fail: (error: unknown) => void): void {
    if (this.#connected) {
      send();
      return;
    }
    const { connectTimeoutMs } = this.#options;
    const waiter: Waiter = {
      send,
      fail,
      failuresAtStart: this.#failures,
      timer: setTimeout(() => {
        this.#waiting.delete(waiter);
        fail(this.#error(` within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs),
    };
    waiter.timer.unref();
    this.#waiting.add(waiter);
  }

  /** The client connected: send what waits, in order. */
  opened(): void {
    this.#connections++;
    this.#connected = true;
    this.#everConnected = true;
    this.#lastError = undefined;
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const waiter of waiting) {
      clearTimeout(waiter.timer);
      waiter.send();
    }
  }

  /** The connection dropped: requests wait again. */
  closed(): void {
    this.#connected = false;
  }

  /** A connection attempt failed with `error`. */
  attemptFailed(error: Error): void {
    this.#failures++;
    this.#lastError = error;
    if (this.#everConnected) return;
    for (const waiter of [...this.#waiting]) {
      if (this.#failures - waiter.failuresAtStart >= this.#options.serverCount) {
        this.#drop(waiter, this.#error(''));
      }
    }
  }

  /** Fails everything waiting with `error` (the session ended, or the provider closed). */
  failAll(error: unknown): void {
    for (const waiter of [...this.#waiting]) this.#drop(waiter, error);
  }

  #drop(waiter: Waiter, error: unknown): void {
    clearTimeout(waiter.timer);
    this.#waiting.delete(waiter);
    waiter.fail(error);
  }

  #error(within: string): BackendUnavailableError {
    const cause = this.#lastError;
    const detail = cause ? `: ${cause.message}` : '';
    return new BackendUnavailableError(
      `could not connect to ZooKeeper at ${this.#options.address}${within}${detail}`,
      {
        cause:
          cause ??
          Object.assign(new Error(`no connection within ${this.#options.connectTimeoutMs} ms`), {
            code: 'ETIMEDOUT',
          }),
      },
    );
  }
}
