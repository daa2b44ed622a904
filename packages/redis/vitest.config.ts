import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

/** LOCKKIT_IOREDIS=6: run against ioredis 6 (the `ioredis6` dev alias) instead of 5. */
const ioredis6 = process.env['LOCKKIT_IOREDIS'] === '6';
const config: ViteUserConfig = packageTests({
  config: ioredis6 ? { resolve: { alias: [{ find: /^ioredis$/, replacement: 'ioredis6' }] } } : {},
  test: { maxWorkers: 2 },
});

export default config;
