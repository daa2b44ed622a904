import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Mutex, RedlockMutex } from 'redis-semaphore';
import Redlock from 'redlock';
import type { BackendId } from '../../backends/backend-ids.js';
import type { Contender, LockClient } from '../contender.js';

const releaseScript =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const leaseMs = 30_000;

async function connect(urls: readonly string[]): Promise<Redis[]> {
  const clients = urls.map((url) => new Redis(url, { lazyConnect: true }));
  await Promise.all(clients.map((client) => client.connect()));
  return clients;
}

function disconnect(clients: readonly Redis[]): Promise<void> {
  for (const client of clients) client.disconnect();
  return Promise.resolve();
}

/**
 * The Redis peers: a raw `SET NX PX` + Lua release loop (single node only: it cannot wait),
 * redlock@5 and redis-semaphore (`Mutex` on one node, `RedlockMutex` on several). Each uses
 * its library's defaults for how it waits: redlock retries every 200 ± 100 ms (here without a
 * retry limit), redis-semaphore every 10 ms.
 */
export function redisPeers(backend: BackendId, urls: readonly string[]): Contender[] {
  const peers: Contender[] = [];
  if (urls.length === 1) {
    peers.push({
      backend,
      library: 'raw SET NX PX + Lua release',
      lockkit: false,
      waits: 'a raw SET NX cannot wait',
      holdsMany: true,
      async open(): Promise<LockClient> {
        const [client] = await connect(urls);
        const sha = (await client!.script('LOAD', releaseScript)) as string;
        return {
          async acquire(name) {
            const token = randomUUID();
            if ((await client!.set(name, token, 'PX', leaseMs, 'NX')) !== 'OK') {
              throw new Error(`${name} is held`);
            }
            return () => client!.evalsha(sha, 1, name, token);
          },
          close: () => disconnect([client!]),
        };
      },
    });
  }
  peers.push({
    backend,
    library: 'redlock@5.0.0-beta.2',
    lockkit: false,
    waits: true,
    holdsMany: true,
    async open(): Promise<LockClient> {
      const clients = await connect(urls);
      const redlock = new Redlock(clients, { retryCount: -1 });
      return {
        async acquire(name) {
          const lock = await redlock.acquire([name], leaseMs);
          return () => lock.release();
        },
        close: () => disconnect(clients),
      };
    },
  });
  peers.push({
    backend,
    library:
      urls.length === 1 ? 'redis-semaphore@5.8.0 Mutex' : 'redis-semaphore@5.8.0 RedlockMutex',
    lockkit: false,
    waits: true,
    holdsMany: true,
    async open(): Promise<LockClient> {
      const clients = await connect(urls);
      const options = { lockTimeout: leaseMs, acquireTimeout: 120_000 };
      return {
        async acquire(name) {
          const mutex =
            clients.length === 1
              ? new Mutex(clients[0]!, name, options)
              : new RedlockMutex(clients, name, options);
          await mutex.acquire();
          return () => mutex.release();
        },
        close: () => disconnect(clients),
      };
    },
  });
  return peers;
}
