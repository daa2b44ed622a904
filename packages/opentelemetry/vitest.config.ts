import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

/** One throwaway Redis server for the run (or LOCKKIT_REDIS_URLS); the memory cases need none. */
const config: ViteUserConfig = packageTests();

export default config;
