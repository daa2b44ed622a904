import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// Real directories, no servers. Two workers even on 2 CPUs (vitest's default is one fewer
// than the CPUs): the two conformance files (io sync and async) mostly wait on timers and
// file-system events, and each has its own directory.
const config: ViteUserConfig = packageTests({ servers: false, test: { maxWorkers: 2 } });

export default config;
