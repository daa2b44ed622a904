import { createRedisLockProvider, type RedisLockProvider } from '../src/index.js';

/** The provider of the conformance suite's child processes (nodes from the environment). */
export function createProvider(): RedisLockProvider {
  const nodes = (process.env['LOCKKIT_TEST_REDIS_NODES'] ?? '').split(',').filter(Boolean);
  return createRedisLockProvider({
    nodes,
    leaseMs: Number(process.env['LOCKKIT_TEST_LEASE_MS'] ?? 1000),
    commandTimeoutMs: 250,
  });
}
