import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.js';

// Real directories, no servers.
const config: ViteUserConfig = packageTests({ servers: false });

export default config;
