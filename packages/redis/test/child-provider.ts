import { createRedisLockProvider, type RedisLockProvider } from '../src/index.js';

/** The provider of the conformance suite's child processes (nodes from the environment). */
export function createProvider(): RedisLockProvider {
  const list = process.env['LOCKKIT_TEST_REDIS_NODES'] ?? '';
  // A redis+cluster:// or redis+sentinel:// URL is one node, commas and all.
  const nodes = list.startsWith('redis+') ? list : list.split(',').filter(Boolean);
  return createRedisLockProvider({
    nodes,
    leaseMs: Number(process.env['LOCKKIT_TEST_LEASE_MS'] ?? 1000),
    commandTimeoutMs: 250,
    minReplicas: Number(process.env['LOCKKIT_TEST_MIN_REPLICAS'] ?? 0),
  });
}
