import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// Two workers (vitest's default on 2 CPUs is one): the files mostly wait on the server, so
// two at once take 139 s instead of 212 s of the CI run, and pass alike.
const config: ViteUserConfig = packageTests({ test: { maxWorkers: 2 } });

export default config;
