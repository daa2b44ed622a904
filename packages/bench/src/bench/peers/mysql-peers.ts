import mysql from 'mysql2/promise';
import type { Contender, LockClient } from '../contender.js';

/** The MariaDB/MySQL peer: raw `GET_LOCK` / `RELEASE_LOCK` on one connection per client. */
export function mysqlPeers(url: string): Contender[] {
  return [
    {
      backend: 'mysql',
      library: 'raw GET_LOCK / RELEASE_LOCK',
      lockkit: false,
      waits: true,
      holdsMany: true,
      async open(): Promise<LockClient> {
        const connection = await mysql.createConnection(url);
        return {
          async acquire(name) {
            // GET_LOCK names are at most 64 characters.
            const key = `raw:${name}`.slice(0, 64);
            await connection.query('SELECT GET_LOCK(?, 3600)', [key]);
            return () => connection.query('SELECT RELEASE_LOCK(?)', [key]);
          },
          close: () => connection.end(),
        };
      },
    },
  ];
}
