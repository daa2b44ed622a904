import { BackendUnavailableError, isLockError } from '@lockkit/core';

const brand: unique symbol = Symbol.for('lockkit.backend-not-installed');

/** Fields of {@link BackendNotInstalledError}. */
export interface BackendNotInstalledDetails {
  /** Backend the URL asked for: `redis`, `postgres`, `mysql`, `zookeeper`, `etcd` or `file`. */
  readonly backend: string;
  /** The package that could not be found (the backend package or its client library). */
  readonly missingPackage: string;
  /** Everything to install for this backend, e.g. `['@lockkit/redis', 'ioredis']`. */
  readonly packages: readonly string[];
}

/**
 * `createLockProvider(url)` found no installed package for the URL's backend (or for the
 * client library that backend needs). The message names the command to run, e.g.
 * `npm install @lockkit/redis ioredis`. It is a {@link BackendUnavailableError} (code
 * `BACKEND_UNAVAILABLE`), so code that treats an unreachable backend as a configuration or
 * deployment problem handles it too; `cause` is Node's module-resolution error.
 */
export class BackendNotInstalledError extends BackendUnavailableError {
  readonly backend: string;
  readonly missingPackage: string;
  readonly packages: readonly string[];
  /** The command that installs what is missing, e.g. `npm install @lockkit/redis ioredis`. */
  readonly installCommand: string;

  constructor(details: BackendNotInstalledDetails, cause?: unknown) {
    const installCommand = `npm install ${details.packages.join(' ')}`;
    super(
      `The ${details.backend} backend needs the package "${details.missingPackage}", which is not installed. ` +
        `Install it next to lockkit: ${installCommand}`,
      { cause },
    );
    this.name = 'BackendNotInstalledError';
    this.backend = details.backend;
    this.missingPackage = details.missingPackage;
    this.packages = Object.freeze([...details.packages]);
    this.installCommand = installCommand;
    Object.defineProperty(this, brand, { value: true, enumerable: false });
  }

  /** True for a `BackendNotInstalledError` from any copy of `lockkit`. */
  static override isInstance(value: unknown): value is BackendNotInstalledError {
    return (
      isLockError(value, 'BACKEND_UNAVAILABLE') && (value as { [brand]?: unknown })[brand] === true
    );
  }
}
