import type { ILockProvider } from '@lockkit/core';
import { importBackend } from './import-backend.js';
import { type CreateLockProviderOptions, parseLockUrl } from './parse-lock-url.js';

/**
 * Creates a lock provider for `url`, importing only the backend package the URL's scheme
 * selects (see {@link parseLockUrl} for the URL forms):
 *
 * ```ts
 * import { createLockProvider } from 'lockkit';
 *
 * const locks = await createLockProvider(process.env.LOCK_URL ?? 'file:///tmp/my-app-locks');
 * await using handle = await locks.createLock('orders:42').acquire({ timeout: 5_000 });
 * ```
 *
 * In a bundled app, pass the backend packages you use as `backendModules` (see
 * {@link CreateLockProviderOptions.backendModules}); a bundler cannot see an import by name.
 *
 * Rejects with `InvalidArgumentError` for a malformed URL or options (before any import or
 * I/O), and with `BackendNotInstalledError` (a `BackendUnavailableError`) when the backend
 * package or its client library is not installed — the message names the `npm install`
 * command. Like every provider, the result connects on first use; close it with `close()`.
 */
export async function createLockProvider(
  url: string | URL,
  options?: CreateLockProviderOptions,
): Promise<ILockProvider> {
  const resolved = parseLockUrl(url, options);
  const factory = await importBackend(resolved.backend, options?.backendModules);
  return factory(resolved.providerOptions);
}
