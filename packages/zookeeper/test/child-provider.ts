import type { ZooKeeperLockProvider } from '../src/index.js';
import { testProvider } from './support.js';

/** The provider of the conformance suite's child processes (server from the environment). */
export function createProvider(): ZooKeeperLockProvider {
  const url = process.env['LOCKKIT_TEST_ZOOKEEPER_URL'];
  if (!url) throw new Error('LOCKKIT_TEST_ZOOKEEPER_URL is not set');
  return testProvider(url);
}
