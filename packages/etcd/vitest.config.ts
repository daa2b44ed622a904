import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// Two workers: the conformance runs on one member and on a cluster, each on servers of its
// own, run side by side.
const config: ViteUserConfig = packageTests({ test: { maxWorkers: 2 } });

export default config;
