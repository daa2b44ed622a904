import { LockProvider } from '@lockkit/core/backend';
import type { RedisClient } from './redis-clients.js';
import { type RedisGrant, RedisLockBackend } from './redis-lock-backend.js';
import { type RedisLockProviderOptions, resolveRedisOptions } from './redis-lock-options.js';

/**
 * A lock provider on Redis: one node, or Redlock over N independent nodes. Mutex, RW lock
 * (writer preference) and semaphore; leases extended every `leaseMs / 3`; pub/sub wake-ups;
 * fencing tokens from a never-deleted counter per lock.
 */
export class RedisLockProvider extends LockProvider<RedisGrant> {
  /** Lease length in ms. */
  readonly leaseMs: number;
  readonly #backend: RedisLockBackend;

  constructor(options: RedisLockProviderOptions = {}) {
    const resolved = resolveRedisOptions(options);
    const backend = new RedisLockBackend(resolved);
    super(backend, { namespace: resolved.namespace, owner: options.owner });
    this.#backend = backend;
    this.leaseMs = resolved.leaseMs;
  }

  /** The ioredis clients, one per node (created or injected); do not close them yourself. */
  get clients(): readonly RedisClient[] {
    return this.#backend.nodes.map((node) => node.client);
  }
}

/**
 * Creates a Redis lock provider. One node:
 * `createRedisLockProvider({ nodes: 'redis://localhost:6379' })`; Redlock: pass N ≥ 3
 * independent nodes. Injected clients are never closed by `close()`.
 */
export function createRedisLockProvider(options: RedisLockProviderOptions = {}): RedisLockProvider {
  return new RedisLockProvider(options);
}
