import { inject } from 'vitest';
import { shutdownClient } from '../src/client-lifecycle.js';
import {
  createZooKeeperLockProvider,
  type ZooKeeperLockProvider,
  type ZooKeeperLockProviderOptions,
} from '../src/index.js';
import {
  type ZooKeeperClient,
  type ZooKeeperStat,
  zkCode,
  zookeeperModule,
} from '../src/zookeeper-client.js';

export { waitFor as eventually } from '@lockkit/conformance';

/** The shared test server's URL (`zookeeper://127.0.0.1:PORT`), from the global setup. */
export function zookeeperUrl(): string {
  const url = inject('lockkitServers').zookeeperUrl;
  if (!url) throw new Error('the global setup started no ZooKeeper');
  return url;
}

/**
 * Session timeout of test providers: the servers run with tickTime 200 ms, so the server
 * accepts 400..4000 ms; 2 s keeps expiry cases quick without false alarms on a busy machine.
 */
export const testSessionTimeoutMs = 2000;

/** A provider on `url` with the test timings (override anything with `extra`). */
export function testProvider(
  url: string,
  extra: Partial<ZooKeeperLockProviderOptions> = {},
): ZooKeeperLockProvider {
  return createZooKeeperLockProvider({
    connectionString: url,
    sessionTimeoutMs: testSessionTimeoutMs,
    operationTimeoutMs: testSessionTimeoutMs,
    spinDelayMs: 50,
    ...extra,
  });
}

/** A bare node-zookeeper-client session for inspecting (and poking) the server in tests. */
export class RawZooKeeper {
  readonly client: ZooKeeperClient;

  private constructor(client: ZooKeeperClient) {
    this.client = client;
  }

  static async connect(
    url: string,
    auth?: { scheme: string; auth: string },
  ): Promise<RawZooKeeper> {
    const client = zookeeperModule().createClient(url.replace(/^zookeeper:\/\//, ''), {
      sessionTimeout: 4000,
      spinDelay: 50,
      retries: 0,
    });
    if (auth) client.addAuthInfo(auth.scheme, Buffer.from(auth.auth));
    const connected = new Promise<void>((resolve) => client.on('connected', () => resolve()));
    client.connect();
    await connected;
    return new RawZooKeeper(client);
  }

  children(path: string): Promise<string[] | null> {
    return new Promise((resolve, reject) =>
      this.client.getChildren(path, undefined, (error, children) => {
        if (zkCode(error) === -101) resolve(null);
        else if (error) reject(error);
        else resolve(children);
      }),
    );
  }

  exists(path: string): Promise<ZooKeeperStat | null> {
    return new Promise((resolve, reject) =>
      this.client.exists(path, undefined, (error, stat) => (error ? reject(error) : resolve(stat))),
    );
  }

  /** Resolves the ZooKeeper error code of removing `path` (0 when removed). */
  remove(path: string): Promise<number> {
    return new Promise((resolve) =>
      this.client.remove(path, -1, (error) => resolve(error ? (zkCode(error) ?? -1) : 0)),
    );
  }

  /** Deletes all of `paths` in one transaction (one zxid): their watch events come together. */
  removeTogether(paths: readonly string[]): Promise<void> {
    type Transaction = {
      remove(path: string, version: number): Transaction;
      commit(callback: (error: unknown) => void): void;
    };
    let transaction = (this.client as unknown as { transaction(): Transaction }).transaction();
    for (const path of paths) transaction = transaction.remove(path, -1);
    return new Promise((resolve, reject) =>
      transaction.commit((error) => (error ? reject(error) : resolve())),
    );
  }

  create(path: string): Promise<number> {
    return new Promise((resolve) =>
      this.client.create(path, undefined, zookeeperModule().ACL.OPEN_ACL_UNSAFE, 0, (error) =>
        resolve(error ? (zkCode(error) ?? -1) : 0),
      ),
    );
  }

  close(): Promise<void> {
    return shutdownClient(this.client, 2000);
  }
}
