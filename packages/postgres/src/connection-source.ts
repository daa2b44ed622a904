import { BackendUnavailableError } from '@lockkit/core';
import pg from 'pg';
import { describeError, setupStates, sqlStateOf } from './pg-errors.js';

/** A connected client and how to give it back. */
export interface OpenedClient {
  readonly client: pg.ClientBase;
  /** True when the client sends queries without waiting for earlier answers (pg `pipeline`). */
  readonly pipelined: boolean;
  /** True when the session is ours alone (its settings may be changed for good). */
  readonly owned: boolean;
  /**
   * Whether the socket keeps the process alive: on while statements are in flight, off
   * while the session only sits there (so an idle provider lets the process exit). Does
   * nothing for a pool's client (the pool decides).
   */
  keepProcessAlive(on: boolean): void;
  /**
   * Gives the client back: ends it (own clients) or returns it to the pool. `destroy` ends
   * the session for sure (it may hold locks or be in an unknown state). Resolves once the
   * socket is closed (own clients) or the client is back in the pool. Never rejects.
   */
  dispose(destroy: boolean): Promise<void>;
}

/** Where connections come from: our own `pg.Client`s, or a `pg.Pool` the caller owns. */
export interface ConnectionSource {
  /** Where the sessions go (`host:port` or the socket path), for error messages. */
  readonly address: string;
  open(): Promise<OpenedClient>;
}

function noop(): void {}

/** `host:port`, or the Unix socket path, that `client` connects to. */
function addressOf(client: pg.Client): string {
  const { host, port } = client;
  return host.startsWith('/') ? `${host}/.s.PGSQL.${port}` : `${host}:${port}`;
}

/** Opens a dedicated `pg.Client` per connection from connection options. */
export function ownClients(config: pg.ClientConfig): ConnectionSource {
  const address = addressOf(new pg.Client(config));
  return {
    address,
    async open(): Promise<OpenedClient> {
      const client = new pg.Client(config);
      // An 'error' without a listener would crash the process; LockConnection adds its own.
      client.on('error', noop);
      try {
        await client.connect();
      } catch (error) {
        void client.end().catch(noop);
        throw new BackendUnavailableError(
          `Could not connect to PostgreSQL at ${address}: ${describeError(error)}`,
          // Wrong credentials or database: waiting does not fix them.
          { cause: error, retryable: !setupStates.has(sqlStateOf(error) ?? '') },
        );
      }
      // A custom `stream` (tests, proxies) may lack ref/unref.
      const stream = client.connection.stream as { ref?: () => void; unref?: () => void };
      return {
        client,
        pipelined: client.pipeline,
        owned: true,
        keepProcessAlive: (on) => {
          if (on) stream.ref?.();
          else stream.unref?.();
        },
        dispose: (destroy) => endClient(client, destroy),
      };
    },
  };
}

/**
 * Checks clients out of an injected pool (and returns them; never ends the pool). A checkout
 * that takes longer than `timeoutMs` is given up; the client is returned when it comes.
 */
export function pooledClients(pool: pg.Pool, timeoutMs: number): ConnectionSource {
  const address = addressOf(new pg.Client(pool.options));
  return {
    address,
    async open(): Promise<OpenedClient> {
      let client: pg.PoolClient;
      try {
        client = await checkOut(pool, timeoutMs);
      } catch (error) {
        throw new BackendUnavailableError(
          `Could not check a PostgreSQL connection (${address}) out of the pool: ${describeError(error)}`,
          { cause: error },
        );
      }
      client.on('error', noop); // stays attached: a destroyed client may still emit later
      let disposed = false;
      return {
        client,
        pipelined: client.pipeline === true,
        owned: false,
        keepProcessAlive: noop,
        dispose: (destroy) => {
          if (!disposed) {
            disposed = true;
            if (!destroy) client.removeListener('error', noop);
            client.release(destroy ? new Error('lockkit: session discarded') : undefined);
          }
          return Promise.resolve();
        },
      };
    },
  };
}

function checkOut(pool: pg.Pool, timeoutMs: number): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(`no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    pool.connect().then(
      (client) => {
        clearTimeout(timer);
        if (late) client.release();
        else resolve(client);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Ends an own client: gracefully when it is healthy, by destroying the socket otherwise (or
 * when a graceful end is not acknowledged within a second, e.g. a paused server).
 */
function endClient(client: pg.Client, destroy: boolean): Promise<void> {
  const stream = client.connection.stream;
  // Closing is work in progress: `await close()` must not be cut short by the process exiting.
  (stream as { ref?: () => void }).ref?.();
  if (destroy) stream.destroy();
  return new Promise((resolve) => {
    if (stream.destroyed) {
      void client.end().then(resolve, resolve);
      return;
    }
    const timer = setTimeout(() => stream.destroy(), 1000);
    timer.unref();
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    void client.end().catch(noop);
  });
}
