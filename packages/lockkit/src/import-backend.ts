import { type ILockProvider, InvalidArgumentError } from '@lockkit/core';
import { BackendNotInstalledError } from './backend-not-installed-error.js';
import { type BackendId, backends } from './backends.js';
import type { BackendModules } from './parse-lock-url.js';

/** A backend package's factory, as `createLockProvider` calls it. */
export type ProviderFactory = (options: Readonly<Record<string, unknown>>) => ILockProvider;

/**
 * Imports a package by name, resolved from this module's location (where npm, pnpm and yarn
 * place lockkit's optional peer dependencies). The specifier is a variable on purpose: the
 * backend packages are optional, so lockkit neither type-checks nor bundles against them.
 */
async function importPackage(name: string): Promise<Record<string, unknown>> {
  return (await import(name)) as Record<string, unknown>;
}

/**
 * Imports the factory of backend `id`. A package that cannot be found (the backend package
 * itself or the client library it imports) becomes a {@link BackendNotInstalledError} naming
 * what to install; any other failure is rethrown as it is.
 */
export async function importBackend(
  id: BackendId,
  given?: BackendModules,
): Promise<ProviderFactory> {
  const { packageName, factory, packages } = backends[id];
  const supplied = suppliedModule(id, given);
  if (supplied) return supplied;
  let module: Record<string, unknown>;
  try {
    module = await importPackage(packageName);
  } catch (error) {
    const missing = missingPackageOf(error);
    if (missing === undefined) throw error;
    throw new BackendNotInstalledError({ backend: id, missingPackage: missing, packages }, error);
  }
  const create = module[factory];
  if (typeof create !== 'function') {
    throw new TypeError(`${packageName} does not export ${factory}(); is it an old version?`);
  }
  return create as ProviderFactory;
}

/**
 * The factory from the `backendModules` the caller passed for `id`, if any. Every entry is
 * checked (a known backend id whose value exports that backend's factory), so a wrong entry
 * fails even when this URL does not use it.
 */
function suppliedModule(id: BackendId, given: BackendModules | undefined): ProviderFactory | null {
  if (given === undefined) return null;
  if (typeof given !== 'object' || given === null) {
    throw new InvalidArgumentError('backendModules must be an object such as { redis }');
  }
  for (const [key, module] of Object.entries(given)) {
    const info =
      key !== 'memory' && Object.hasOwn(backends, key) ? backends[key as BackendId] : undefined;
    if (info === undefined) {
      throw new InvalidArgumentError(
        `Unknown backend "${key}" in backendModules (use: file, redis, postgres, mysql, zookeeper, etcd)`,
      );
    }
    const create = (module as Record<string, unknown> | null | undefined)?.[info.factory];
    if (typeof create !== 'function') {
      throw new InvalidArgumentError(
        `backendModules.${key} must be the ${info.packageName} module (import * as ${key} from '${info.packageName}'); it has no ${info.factory}()`,
      );
    }
  }
  const module = (given as Record<string, Record<string, unknown>>)[id];
  return module ? (module[backends[id].factory] as ProviderFactory) : null;
}

/** The package named by Node's "Cannot find package 'x'" resolution error, if it is one. */
export function missingPackageOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  if (typeof message !== 'string') return undefined;
  return /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/']+)/.exec(message)?.[1];
}
