import type { LockHandle } from '@lockkit/core';
import { delay, grantBehind, LockProvider } from '@lockkit/core/backend';
import { shutdownClient } from './client-lifecycle.js';
import { type ZooKeeperClient, zookeeperModule } from './zookeeper-client.js';
import { type ZooKeeperGrant, ZooKeeperLockBackend } from './zookeeper-lock-backend.js';
import { resolveOptions, type ZooKeeperLockProviderOptions } from './zookeeper-options.js';

/**
 * Locks on ZooKeeper: Curator-style mutex, read-write lock and semaphore on
 * ephemeral-sequential nodes, strictly FIFO, with `czxid` fencing tokens. Adds fault hooks
 * for tests to the common {@link LockProvider}.
 */
export class ZooKeeperLockProvider extends LockProvider<ZooKeeperGrant> {
  readonly #zookeeper: ZooKeeperLockBackend;
  readonly #connectionString: string | undefined;

  constructor(options: ZooKeeperLockProviderOptions) {
    const resolved = resolveOptions(options);
    const backend = new ZooKeeperLockBackend(resolved);
    super(backend, { namespace: resolved.namespace, owner: resolved.owner });
    this.#zookeeper = backend;
    this.#connectionString = resolved.connectionString;
  }

  /** The ZooKeeper path of the node behind `handle` (for inspection and tests). */
  nodePathOf(handle: LockHandle): string {
    return grantBehind<ZooKeeperGrant>(handle).grant.path;
  }

  /** The client of the current session, if one is open (for inspection and tests). */
  get currentClient(): ZooKeeperClient | undefined {
    return this.#zookeeper.sessions.peek()?.client;
  }

  /**
   * Fault injection: deletes the node behind `handle` as an operator or another client
   * would, without telling the handle. Its `signal` then aborts with `LockLostError`.
   */
  async loseLock(handle: LockHandle): Promise<void> {
    const { grant } = grantBehind<ZooKeeperGrant>(handle);
    await grant.session.remove(grant.path);
  }

  /**
   * Fault injection: makes the server expire the current session (a second client attaches
   * to the session and closes it), as a partition longer than the session timeout would.
   * Every handle of the session loses its lock; the next acquire uses a new session.
   * Needs a provider created with `connectionString`.
   */
  async expireSession(): Promise<void> {
    const session = this.#zookeeper.sessions.peek();
    if (!session || session.lost) return;
    const connectionString = this.#connectionString;
    if (!connectionString) throw new TypeError('expireSession needs a connectionString');
    const lost = new Promise<void>((resolve) => session.onLost(() => resolve()));
    // Our client may win the session back before the intruder's close lands; try again.
    for (let attempt = 0; attempt < 10 && !session.lost; attempt++) {
      const intruder = zookeeperModule().createClient(connectionString, {
        sessionTimeout: session.timeoutMs,
        spinDelay: 100,
        retries: 0,
        sessionId: session.sessionId,
        sessionPassword: session.client.getSessionPassword(),
      });
      const connected = new Promise<void>((resolve) =>
        intruder.on('connected', () => {
          // Close at once, before our own client reconnects and takes the session back.
          shutdownClient(intruder, 2000).then(resolve, resolve);
        }),
      );
      intruder.connect();
      try {
        await Promise.race([connected, delay(session.timeoutMs)]);
      } finally {
        await shutdownClient(intruder, 2000);
      }
      await Promise.race([lost, delay(500)]);
    }
  }
}

/**
 * Creates a ZooKeeper lock provider. Options are validated here, before any I/O; the first
 * acquire connects.
 *
 * @example
 * ```ts
 * const locks = createZooKeeperLockProvider({ connectionString: 'localhost:2181' });
 * await using handle = await locks.createLock('invoice:42').acquire({ timeout: 5000 });
 * await store.write(invoice, { fencingToken: handle.fencingToken });
 * ```
 */
export function createZooKeeperLockProvider(
  options: ZooKeeperLockProviderOptions,
): ZooKeeperLockProvider {
  return new ZooKeeperLockProvider(options);
}
