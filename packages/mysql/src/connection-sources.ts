import mysql, {
  type Connection,
  type ConnectionOptions,
  type Pool,
  type PoolConnection,
} from 'mysql2';
import type { ConnectionSource } from './lock-connection.js';

function ignore(): void {}

/** Opens and ends the provider's own connections. */
export function ownConnections(config: string | ConnectionOptions): ConnectionSource {
  return {
    open: () =>
      new Promise((resolve, reject) => {
        const raw =
          typeof config === 'string'
            ? mysql.createConnection(config)
            : mysql.createConnection({ ...config });
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
        raw.end((error) => {
          if (error) raw.destroy();
          resolve();
        });
      }),
  };
}

/** Borrows connections from an injected pool and hands them back (never ends the pool). */
export function pooledConnections(pool: Pool): ConnectionSource {
  return {
    open: () =>
      new Promise((resolve, reject) => {
        pool.getConnection((error, connection) => {
          if (error) reject(error);
          else resolve(connection);
        });
      }),
    dispose: async (raw, healthy) => {
      const connection = raw as PoolConnection;
      if (healthy) {
        // Leave the session as the pool's other users expect it: no user locks, default timeout.
        const reset = await query(connection, 'DO RELEASE_ALL_LOCKS()')
          .then(() => query(connection, 'SET SESSION wait_timeout = @@GLOBAL.wait_timeout'))
          .then(
            () => true,
            () => false,
          );
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
