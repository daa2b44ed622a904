import { BackendUnavailableError } from '@lockkit/core';
import pg from 'pg';
import { describeError } from './pg-errors.js';

/** A connected client and how to give it back. */
export interface OpenedClient {
  readonly client: pg.ClientBase;
  /** True when the client sends queries without waiting for earlier answers (pg `pipeline`). */
  readonly pipelined: boolean;
  /** True when the session is ours alone (its settings may be changed for good). */
  readonly owned: boolean;
  /**
   * Gives the client back: ends it (own clients) or returns it to the pool. `destroy` ends
   * the session for sure (it may hold locks or be in an unknown state). Resolves once the
   * socket is closed (own clients) or the client is back in the pool. Never rejects.
   */
  dispose(destroy: boolean): Promise<void>;
}

/** Where connections come from: our own `pg.Client`s, or a `pg.Pool` the caller owns. */
export interface ConnectionSource {
  open(): Promise<OpenedClient>;
  /** Ends whatever the source owns (nothing for an injected pool). */
  close(): Promise<void>;
}

function noop(): void {}

/** Opens a dedicated `pg.Client` per connection from connection options. */
export function ownClients(config: pg.ClientConfig): ConnectionSource {
  return {
    async open(): Promise<OpenedClient> {
      const client = new pg.Client(config);
      // An 'error' without a listener would crash the process; LockConnection adds its own.
      client.on('error', noop);
      try {
        await client.connect();
      } catch (error) {
        void client.end().catch(noop);
        throw new BackendUnavailableError(
          `Could not connect to PostgreSQL: ${describeError(error)}`,
          { cause: error },
        );
      }
      return {
        client,
        pipelined: client.pipeline,
        owned: true,
        dispose: (destroy) => endClient(client, destroy),
      };
    },
    close: () => Promise.resolve(),
  };
}

/** Checks clients out of an injected pool (and returns them; never ends the pool). */
export function pooledClients(pool: pg.Pool): ConnectionSource {
  return {
    async open(): Promise<OpenedClient> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new BackendUnavailableError(
          `Could not check a connection out of the pool: ${describeError(error)}`,
          { cause: error },
        );
      }
      client.on('error', noop); // stays attached: a destroyed client may still emit later
      let disposed = false;
      return {
        client,
        pipelined: client.pipeline === true,
        owned: false,
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
    close: () => Promise.resolve(),
  };
}

/**
 * Ends an own client: gracefully when it is healthy, by destroying the socket otherwise (or
 * when a graceful end is not acknowledged within a second, e.g. a paused server).
 */
function endClient(client: pg.Client, destroy: boolean): Promise<void> {
  const stream = client.connection.stream;
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
