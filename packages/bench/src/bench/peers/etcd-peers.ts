import { Etcd3 } from 'etcd3';
import type { Contender, LockClient } from '../contender.js';

const base = '/raw-bench/';

function hostsOf(url: string): string[] {
  return url.replace(/^etcd:\/\//, '').split(',');
}

/**
 * The etcd peers, in raw `etcd3` calls:
 * - `etcd3`'s own `client.lock(name)`: a lease of its own per lock (granted, then revoked on
 *   release) and a put-if-absent on the key. It does not wait: a held lock fails at once.
 * - the put-if-absent loop most hand-written etcd locks are: one lease per client (kept alive
 *   by `etcd3`), `if create_revision(key) == 0 then put(key, lease)`; when the key exists,
 *   a watch for its deletion from the transaction's revision on, then try again. Every waiter
 *   wakes on every release (a herd). No fencing, no lost signal, no FIFO.
 */
export function etcdPeers(url: string): Contender[] {
  return [
    {
      backend: 'etcd',
      library: 'etcd3 client.lock() (try once)',
      lockkit: false,
      waits: 'etcd3’s Lock fails at once when the lock is held; it does not wait',
      holdsMany: 'grants a lease of its own per held lock',
      async open(): Promise<LockClient> {
        const client = new Etcd3({ hosts: hostsOf(url) });
        return {
          async acquire(name) {
            const lock = client.lock(`${base}lock/${name}`).ttl(10);
            await lock.acquire();
            return () => lock.release();
          },
          close: async () => client.close(),
        };
      },
    },
    {
      backend: 'etcd',
      library: 'raw put-if-absent txn + watch loop',
      lockkit: false,
      waits: true,
      holdsMany: true,
      async open(): Promise<LockClient> {
        const client = new Etcd3({ hosts: hostsOf(url) });
        const lease = client.lease(10);
        lease.on('lost', () => undefined);
        const leaseId = await lease.grant();
        return {
          async acquire(name) {
            const key = Buffer.from(`${base}txn/${name}`);
            for (;;) {
              const result = await client.kv.txn({
                compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }],
                success: [{ request_put: { key, value: Buffer.alloc(0), lease: leaseId } }],
              });
              if (result.succeeded) {
                return () => client.kv.deleteRange({ key });
              }
              const from = (BigInt(result.header.revision) + 1n).toString();
              const watcher = await client.watch().key(key).startRevision(from).create();
              await new Promise<void>((resolve) => {
                watcher.on('delete', () => resolve());
                watcher.on('error', () => resolve());
              });
              await watcher.cancel();
            }
          },
          async close() {
            await lease.revoke().catch(() => undefined);
            client.close();
          },
        };
      },
    },
  ];
}
