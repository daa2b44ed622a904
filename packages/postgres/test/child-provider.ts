import { createPostgresLockProvider, type PostgresLockProvider } from '../src/index.js';

/** The provider of the conformance suite's child processes (server URL from the environment). */
export function createProvider(): PostgresLockProvider {
  const url = process.env['LOCKKIT_TEST_POSTGRES_URL'];
  if (!url) throw new Error('LOCKKIT_TEST_POSTGRES_URL is not set');
  return createPostgresLockProvider({ connection: url });
}
