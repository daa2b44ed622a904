import { createMySqlLockProvider, type MySqlLockProvider } from '../src/index.js';

/** The provider a child process holds its lock through (cross-process tests). */
export function createProvider(): MySqlLockProvider {
  const url = process.env['LOCKKIT_MYSQL_URL'];
  if (!url) throw new Error('LOCKKIT_MYSQL_URL is not set');
  const sessionTimeout = process.env['LOCKKIT_MYSQL_SESSION_TIMEOUT'];
  const fencing = process.env['LOCKKIT_MYSQL_FENCING'] as 'table' | 'sequence' | undefined;
  return createMySqlLockProvider({
    connection: url,
    ...(fencing ? { fencing } : {}),
    ...(sessionTimeout
      ? { sessionTimeoutSeconds: Number(sessionTimeout), keepaliveIntervalMs: 500 }
      : {}),
  });
}
