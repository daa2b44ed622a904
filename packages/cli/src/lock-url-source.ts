import { readFileSync } from 'node:fs';
import type { Environment } from './invocation.js';
import { UrlFileError } from './url-file-error.js';
import { UsageError } from './usage-error.js';

/** Where the lock URL may come from, in order of precedence. */
export interface LockUrlSources {
  /** The URL on the command line (before the lock name). */
  readonly argument: string | undefined;
  /** `--url-file <file>`: a file holding the URL. */
  readonly urlFile: string | undefined;
}

/**
 * The lock URL: the command-line argument, else the content of `--url-file`, else
 * `LOCKKIT_URL`. Reads the file (the only I/O of parsing, so call it last); throws
 * {@link UrlFileError} when it cannot, {@link UsageError} when no source gives a URL.
 */
export function lockUrlFrom(
  command: string,
  sources: LockUrlSources,
  environment: Environment,
): string {
  if (sources.argument !== undefined) return sources.argument;
  if (sources.urlFile !== undefined) return readUrlFile(sources.urlFile);
  const fromEnvironment = environment['LOCKKIT_URL']?.trim();
  if (fromEnvironment) return fromEnvironment;
  throw new UsageError(
    `lockkit ${command} needs a lock URL: give it before the lock name, with --url-file <file>, or in the LOCKKIT_URL environment variable`,
  );
}

/** Checks the `--url-file` value itself (before any I/O). */
export function checkUrlFileOption(urlFile: string | undefined): void {
  if (urlFile === '') throw new UsageError('--url-file takes the name of a file');
}

/** The one URL in `path`: surrounding whitespace (the trailing newline) is dropped. */
function readUrlFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UrlFileError(`cannot read the lock URL from --url-file ${path}: ${reason(error)}`, {
      cause: error,
    });
  }
  const url = text.trim();
  if (url === '') {
    throw new UrlFileError(`--url-file ${path} is empty: put the lock URL in it`);
  }
  if (/\s/.test(url)) {
    throw new UrlFileError(
      `--url-file ${path} holds more than the lock URL: put only the URL in it, on one line`,
    );
  }
  return url;
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message : String(error);
}
