import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// Three workers (vitest's default on 2 CPUs is one): the files mostly wait on the server, and
// the three conformance files (one per fencing source, about 70 s each) then run at once:
// 85-89 s instead of 152 s with two workers, 212 s with one.
const config: ViteUserConfig = packageTests({ test: { maxWorkers: 3 } });

export default config;
