import mysql, {
  type Connection,
  type ConnectionOptions,
  type Pool,
  type PoolConnection,
} from 'mysql2';
import type { ConnectionSource } from './lock-connection.js';

function ignore(): void {}

/** Where a connection from `options` goes: `host:port` or the socket path. */
export function addressOf(options: string | ConnectionOptions): string {
  const config: Partial<ConnectionOptions> =
    typeof options === 'string' ? { uri: options } : options;
  let { host, port, socketPath } = config;
  if (config.uri !== undefined) {
    const url = new URL(config.uri);
    host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    port = url.port === '' ? undefined : Number(url.port);
    socketPath = url.searchParams.get('socketPath') ?? socketPath;
  }
  return socketPath ?? `${host || 'localhost'}:${port || 3306}`;
}

/**
 * Opens and ends the provider's own connections; opening (TCP connect, handshake and login)
 * gives up after `connectTimeoutMs`.
 */
export function ownConnections(
  config: string | ConnectionOptions,
  connectTimeoutMs: number,
): ConnectionSource {
  const options: ConnectionOptions = typeof config === 'string' ? { uri: config } : { ...config };
  return {
    address: addressOf(config),
    owned: true,
    open: () =>
      new Promise((resolve, reject) => {
        const raw = mysql.createConnection({ ...options, connectTimeout: connectTimeoutMs });
        raw.on('error', ignore); // errors are reported through queries and LockConnection
        raw.connect((error) => {
          if (error) {
            raw.destroy();
            reject(error);
          } else resolve(raw);
        });
      }),
    dispose: (raw, healthy) =>
      new Promise((resolve) => {
        if (!healthy) {
          raw.destroy();
          resolve();
          return;
        }
        // Closing is work in progress: `await close()` must not be cut short by an exit.
        (raw as { stream?: { ref?: () => void } }).stream?.ref?.();
        // A server that does not acknowledge the goodbye (paused, hung) is cut off.
        const timer = setTimeout(() => {
          raw.destroy();
          resolve();
        }, 1000);
        timer.unref();
        raw.end((error) => {
          clearTimeout(timer);
          if (error) raw.destroy();
          resolve();
        });
      }),
  };
}

/**
 * Borrows connections from an injected pool and hands them back (never ends the pool). A
 * checkout that takes longer than `timeoutMs` is given up; the connection goes back when it
 * comes.
 */
export function pooledConnections(pool: Pool, timeoutMs: number): ConnectionSource {
  const config = (pool as { config?: { connectionConfig?: ConnectionOptions } }).config
    ?.connectionConfig;
  return {
    address: config ? addressOf(config) : 'the pool',
    owned: false,
    open: () =>
      new Promise((resolve, reject) => {
        let late = false;
        const timer = setTimeout(() => {
          late = true;
          reject(new Error(`no connection from the pool within ${timeoutMs} ms`));
        }, timeoutMs);
        pool.getConnection((error, connection) => {
          clearTimeout(timer);
          if (late) connection?.release();
          else if (error) reject(error);
          else resolve(connection);
        });
      }),
    dispose: async (raw, healthy) => {
      const connection = raw as PoolConnection;
      if (healthy) {
        // Leave the session as the pool's other users expect it: no user locks, default timeout.
        const resetting = query(connection, 'DO RELEASE_ALL_LOCKS()').then(() =>
          query(connection, 'SET SESSION wait_timeout = @@GLOBAL.wait_timeout'),
        );
        // A server that does not answer (paused, hung) gets the connection destroyed.
        let timer: NodeJS.Timeout | undefined;
        const tooSlow = new Promise<void>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), timeoutMs);
        });
        const reset = await Promise.race([resetting, tooSlow]).then(
          () => true,
          () => false,
        );
        clearTimeout(timer);
        if (reset) {
          connection.release();
          return;
        }
      }
      connection.destroy();
    },
  };
}

function query(raw: Connection, sql: string): Promise<void> {
  return new Promise((resolve, reject) => {
    raw.query(sql, (error) => (error ? reject(error) : resolve()));
  });
}
