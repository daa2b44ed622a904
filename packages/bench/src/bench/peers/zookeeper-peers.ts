import { createRequire } from 'node:module';
import type { ZooKeeperClient } from '@lockkit/zookeeper';
import type { Contender, LockClient } from '../contender.js';

interface ZooKeeperModule {
  createClient(
    connectionString: string,
    options: { sessionTimeout: number; spinDelay: number; retries: number },
  ): ZooKeeperClient;
  readonly ACL: { readonly OPEN_ACL_UNSAFE: Parameters<ZooKeeperClient['create']>[2] };
}

const zookeeper = createRequire(import.meta.url)('node-zookeeper-client') as ZooKeeperModule;
const persistent = 0;
const ephemeralSequential = 3;
const nodeExists = -110;
const base = '/raw-bench';

function call<T>(start: (done: (error: unknown, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    start((error, value) => (error ? reject(error) : resolve(value))),
  );
}

async function connect(connectionString: string): Promise<ZooKeeperClient> {
  const client = zookeeper.createClient(connectionString.replace(/^zookeeper:\/\//, ''), {
    sessionTimeout: 10_000,
    spinDelay: 200,
    retries: 0,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('ZooKeeper: no connection in 10 s')), 10_000);
    client.on('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  return client;
}

/**
 * The ZooKeeper peer: the textbook lock recipe in raw `node-zookeeper-client` calls — an
 * ephemeral sequential node under the lock's parent, `getChildren`, and an `exists` watch on
 * the predecessor only. No session supervision, no fencing, no lost signal.
 */
export function zookeeperPeers(url: string): Contender[] {
  return [
    {
      backend: 'zookeeper',
      library: 'raw ephemeral-sequential recipe',
      lockkit: false,
      waits: true,
      holdsMany: true,
      async open(): Promise<LockClient> {
        const client = await connect(url);
        const acl = zookeeper.ACL.OPEN_ACL_UNSAFE;
        const parents = new Set<string>();
        const ensure = async (path: string): Promise<void> => {
          if (parents.has(path)) return;
          await call<string>((done) => client.create(path, undefined, acl, persistent, done)).catch(
            (error: unknown) => {
              if ((error as { code?: unknown }).code !== nodeExists) throw error;
            },
          );
          parents.add(path);
        };
        return {
          async acquire(name) {
            const parent = `${base}/${encodeURIComponent(name)}`;
            await ensure(base);
            await ensure(parent);
            const path = await call<string>((done) =>
              client.create(`${parent}/n-`, undefined, acl, ephemeralSequential, done),
            );
            const mine = path.slice(parent.length + 1);
            const release = (): Promise<void> =>
              call<void>((done) => client.remove(path, -1, (error) => done(error, undefined)));
            for (;;) {
              const children = (
                await call<string[]>((done) => client.getChildren(parent, undefined, done))
              ).sort();
              const index = children.indexOf(mine);
              if (index === 0) return release;
              if (index < 0) throw new Error(`lost our node ${path}`);
              let wake: () => void = () => undefined;
              const deleted = new Promise<void>((resolve) => {
                wake = resolve;
              });
              const stat = await call<unknown>((done) =>
                client.exists(`${parent}/${children[index - 1]}`, () => wake(), done),
              );
              if (stat) await deleted;
            }
          },
          close: async () => client.close(),
        };
      },
    },
  ];
}
