export { type LockKeys, lockKeys, mutexKey } from './lock-keys.js';
export type { MySqlGrant } from './mysql-lock-backend.js';
export type { MySqlLockProviderOptions, MySqlPoolLike } from './mysql-lock-options.js';
export { createMySqlLockProvider, MySqlLockProvider } from './mysql-lock-provider.js';
