import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

const config: ViteUserConfig = packageTests({ test: { maxWorkers: 2 } });

export default config;
