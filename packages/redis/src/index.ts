export type { RedisClient } from './redis-clients.js';
export { KEY_ROOT, type RedisLockKeys, redisLockKeys } from './redis-keys.js';
export type { RedisGrant } from './redis-lock-backend.js';
export { RedisLockBackend } from './redis-lock-backend.js';
export type {
  RedisLockProviderOptions,
  RedisNodeSpec,
  ResolvedRedisOptions,
} from './redis-lock-options.js';
export { resolveRedisOptions } from './redis-lock-options.js';
export { createRedisLockProvider, RedisLockProvider } from './redis-lock-provider.js';
