import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// Unit tests of the chaos checker and the report writers; the chaos run itself is a script.
const config: ViteUserConfig = packageTests({ servers: false, test: { testTimeout: 10_000 } });

export default config;
