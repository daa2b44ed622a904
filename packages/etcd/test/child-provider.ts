import type { EtcdLockProvider } from '../src/index.js';
import { testProvider } from './support.js';

/** The provider of the conformance suite's child processes (server from the environment). */
export function createProvider(): EtcdLockProvider {
  const url = process.env['LOCKKIT_TEST_ETCD_URL'];
  if (!url) throw new Error('LOCKKIT_TEST_ETCD_URL is not set');
  return testProvider(url);
}
