import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** Unit tests of the chaos checker and the report writers; the chaos run itself is a script. */
const config: ViteUserConfig = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 10_000,
  },
});

export default config;
