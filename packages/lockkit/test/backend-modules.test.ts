import { describe, expect, it } from 'vitest';
import {
  createLockProvider,
  createMemoryLockProvider,
  InvalidArgumentError,
  parseLockUrl,
} from '../src/index.js';

// backendModules is how a bundled app hands createLockProvider the backend packages it
// imported itself. The consumer test (scripts/consumer-test.sh) bundles a real app with
// esbuild; these cases check the option's own rules.

describe('createLockProvider({ backendModules })', () => {
  it('uses the module given for the URL’s backend, without backendModules in its options', async () => {
    const seen: Record<string, unknown>[] = [];
    const file = {
      createFileLockProvider(options: Record<string, unknown>) {
        seen.push(options);
        return createMemoryLockProvider();
      },
    };
    const provider = await createLockProvider('file:///var/lock/app?leaseMs=5000', {
      backendModules: { file },
    });
    try {
      expect(seen).toEqual([{ directory: '/var/lock/app', leaseMs: 5000 }]);
      const handle = await provider.createLock('a').acquire();
      expect(await handle.release()).toBe(true);
    } finally {
      await provider.close();
    }
  });

  it('leaves backendModules out of parseLockUrl’s provider options', () => {
    const parsed = parseLockUrl('memory:', { namespace: 'x', backendModules: {} });
    expect(parsed.providerOptions).toEqual({ namespace: 'x' });
  });

  it.each([
    ['not an object', 42, /backendModules must be an object/],
    ['an unknown backend', { redys: {} }, /Unknown backend "redys" in backendModules/],
    ['an inherited name', { toString: {} }, /Unknown backend "toString"/],
    ['memory', { memory: {} }, /Unknown backend "memory"/],
    [
      'a module without the factory',
      { redis: { createLockProvider() {} } },
      /backendModules\.redis must be the @lockkit\/redis module .*createRedisLockProvider/,
    ],
  ])(
    'refuses %s with InvalidArgumentError, even for another URL',
    async (_label, given, message) => {
      const attempt = createLockProvider('memory:', { backendModules: given as never });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toThrow(message);
    },
  );
});
