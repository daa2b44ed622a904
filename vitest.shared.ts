import { defineConfig, mergeConfig, type ViteUserConfig } from 'vitest/config';

type TestOptions = NonNullable<ViteUserConfig['test']>;

/**
 * The vitest settings every package shares: tests in `test/`, timeouts sized for real servers,
 * and (unless `servers: false`) the throwaway servers of `test/global-setup.ts`, started once
 * per run. A package passes only what differs.
 */
export function packageTests(
  options: { servers?: boolean; test?: TestOptions; config?: ViteUserConfig } = {},
): ViteUserConfig {
  const shared = defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      ...(options.servers !== false && { globalSetup: ['test/global-setup.ts'] }),
      testTimeout: 30_000,
      hookTimeout: 60_000,
      ...options.test,
    },
  });
  return options.config ? mergeConfig(shared, options.config) : shared;
}
