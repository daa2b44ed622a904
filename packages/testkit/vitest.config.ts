import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// The test files mostly wait on servers: run them all at once even on 2 cores.
const config: ViteUserConfig = packageTests({ test: { maxWorkers: 6 } });

export default config;
