import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { type BackendId, BackendNotInstalledError, backends } from 'lockkit';

/**
 * Imports `specifiers[last]` as `lockkit` would see it: `lockkit` resolved from here, the
 * backend package from `lockkit`, a client library from the backend package. So inspection
 * uses exactly the copies `createLockProvider` uses, wherever the package manager put them.
 */
export async function importBeside<T>(backend: BackendId, ...specifiers: string[]): Promise<T> {
  let from = import.meta.url;
  for (const specifier of ['lockkit', ...specifiers]) {
    try {
      from = pathToFileURL(createRequire(from).resolve(specifier)).href;
    } catch (error) {
      const { packages } = backends[backend];
      throw new BackendNotInstalledError({ backend, missingPackage: specifier, packages }, error);
    }
  }
  return (await import(from)) as T;
}
