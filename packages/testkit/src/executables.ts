import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Debian packages that provide the servers the test kit runs. */
export type DebianPackage =
  | 'redis-server'
  | 'postgresql'
  | 'mariadb-server'
  | 'zookeeper'
  | 'etcd-server';

/** Thrown when a server binary is not installed; names the package that provides it. */
export class MissingServerBinaryError extends Error {
  /** The Debian package to install. */
  readonly debianPackage: DebianPackage;

  constructor(what: string, debianPackage: DebianPackage, searched: readonly string[]) {
    super(
      `${what} was not found (looked in: ${searched.join(', ')}). ` +
        `Install the Debian package "${debianPackage}" (apt-get install -y ${debianPackage}) ` +
        'or put the binary on PATH.',
    );
    this.name = 'MissingServerBinaryError';
    this.debianPackage = debianPackage;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isReadable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** The directories of `PATH` followed by the usual system binary directories. */
export function defaultSearchDirectories(): string[] {
  const fromPath = (process.env['PATH'] ?? '').split(delimiter).filter((entry) => entry !== '');
  const system = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
  return [...new Set([...fromPath, ...system])];
}

/**
 * Finds the first executable among `names` (in order of preference) in `directories`.
 *
 * @throws {MissingServerBinaryError} naming `debianPackage` when none exists.
 */
export function findExecutable(
  names: readonly string[],
  debianPackage: DebianPackage,
  directories: readonly string[] = defaultSearchDirectories(),
): string {
  for (const name of names) {
    for (const directory of directories) {
      const candidate = join(directory, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  throw new MissingServerBinaryError(names.join(' / '), debianPackage, directories);
}

/** Finds the first readable file among `paths`, or throws {@link MissingServerBinaryError}. */
export function findFile(paths: readonly string[], debianPackage: DebianPackage): string {
  const found = paths.find(isReadable);
  if (found === undefined)
    throw new MissingServerBinaryError(paths.join(' / '), debianPackage, paths);
  return found;
}

/** PostgreSQL `bin` directories in Debian's layout (`/usr/lib/postgresql/<version>/bin`), newest first. */
export function postgresBinaryDirectories(): string[] {
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql')
      .filter((entry) => /^\d+(\.\d+)?$/.test(entry))
      .sort((left, right) => Number(right) - Number(left));
  } catch {
    // Not Debian's layout; PATH may still have the binaries.
  }
  return versions.map((version) => `/usr/lib/postgresql/${version}/bin`);
}
