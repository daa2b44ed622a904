import { createRequire } from 'node:module';
import { int64Key } from '@lockkit/core/backend';
import pg from 'pg';
import type { Contender, LockClient } from '../contender.js';

type AdvisoryLockFactory = (url: string) => (name: string) => {
  lock(): Promise<() => Promise<void>>;
};

/** advisory-lock 2.0.0 is CommonJS with `exports.default`. */
const advisoryLock = (
  createRequire(import.meta.url)('advisory-lock') as { default: AdvisoryLockFactory }
).default;

/**
 * The PostgreSQL peers: raw session advisory locks on one `pg` connection per client
 * (`pg_advisory_lock` waits server-side), and the `advisory-lock` package, which opens a
 * connection for every lock it takes.
 */
export function postgresPeers(url: string): Contender[] {
  return [
    {
      backend: 'postgres',
      library: 'raw pg_advisory_lock / unlock',
      lockkit: false,
      waits: true,
      holdsMany: true,
      async open(): Promise<LockClient> {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        return {
          async acquire(name) {
            const key = int64Key('raw', 'mutex', name).toString();
            await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
            return () => client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
          },
          close: () => client.end(),
        };
      },
    },
    {
      backend: 'postgres',
      library: 'advisory-lock@2.0.0',
      lockkit: false,
      waits: true,
      holdsMany: 'opens one connection per held lock',
      async open(): Promise<LockClient> {
        const mutexes = advisoryLock(url);
        return {
          async acquire(name) {
            return mutexes(name).lock();
          },
          close: async () => undefined,
        };
      },
    },
  ];
}
