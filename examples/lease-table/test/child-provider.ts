import { createLeaseTableLockProvider } from '../src/index.js';
import { testOptions } from './test-options.js';

/** The provider of the conformance suite's child processes (server URL from the environment). */
export function createProvider(): ReturnType<typeof createLeaseTableLockProvider> {
  const url = process.env['LEASE_TABLE_TEST_URL'];
  if (!url) throw new Error('LEASE_TABLE_TEST_URL is not set');
  return createLeaseTableLockProvider({ connection: url, ...testOptions });
}
