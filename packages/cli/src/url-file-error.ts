/**
 * `--url-file` names a file lockkit cannot read, or one without a URL in it; `main` prints it
 * and exits with 66 (EX_NOINPUT).
 */
export class UrlFileError extends Error {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UrlFileError';
  }
}
