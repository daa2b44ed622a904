import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// The conformance suite's outage case pauses the shared server: one file at a time.
const config: ViteUserConfig = packageTests({ test: { fileParallelism: false } });

export default config;
