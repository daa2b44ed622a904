/**
 * The handful of file-system calls the lock algorithms use, in two flavours with one
 * promise-returning shape: `sync` runs each call synchronously (a local metadata call takes a
 * few microseconds, less than a thread-pool round trip) and `async` goes through libuv's
 * thread pool (for network file systems, where one call can stall for seconds).
 *
 * @module
 */
import * as fs from 'node:fs';
import { BackendUnavailableError } from '@lockkit/core';

/** How file-system calls are made. */
export type FileIo = 'sync' | 'async';

/** The calls the lock algorithms need. Every path is absolute. */
export interface FileOps {
  /** Creates one directory (EEXIST if it exists). */
  mkdir(path: string): Promise<void>;
  /** Creates a directory and its missing parents (no error if it exists). */
  mkdirp(path: string): Promise<void>;
  /** Removes an EMPTY directory (ENOTEMPTY otherwise): the only conditional delete POSIX has. */
  rmdir(path: string): Promise<void>;
  /** Atomic rename; onto an existing directory only if that directory is empty. */
  rename(from: string, to: string): Promise<void>;
  /** Sets atime and mtime to `epochMs`. */
  touch(path: string, epochMs: number): Promise<void>;
  /** mtime in epoch ms. */
  mtimeMs(path: string): Promise<number>;
  readdir(path: string): Promise<string[]>;
  /** Opens (creating if missing) a small file for reading and writing; resolves the fd. */
  openFile(path: string): Promise<number>;
  closeFile(fd: number): Promise<void>;
  /** Creates or replaces a small file with `text`. */
  writeFile(path: string, text: string): Promise<void>;
  readFile(path: string): Promise<string>;
  /** Removes a file. */
  unlink(path: string): Promise<void>;
  /** rm -rf (cleanup only). */
  removeTree(path: string): Promise<void>;
}

/** The error code of a Node.js system error, if any. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** ENOENT: the path (or a parent) does not exist. */
export function isMissing(error: unknown): boolean {
  return errorCode(error) === 'ENOENT';
}

/** The target directory exists and is not empty (Linux says ENOTEMPTY, POSIX allows EEXIST). */
export function isOccupied(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOTEMPTY' || code === 'EEXIST';
}

/** Wraps an unexpected file-system error as a BackendUnavailableError (cause kept). */
export function unavailable(what: string, error: unknown): BackendUnavailableError {
  if (BackendUnavailableError.isInstance(error)) return error;
  const code = errorCode(error);
  return new BackendUnavailableError(
    `File lock backend: ${what} failed${code ? ` (${code})` : ''}`,
    { cause: error },
  );
}

/**
 * Rethrows a `BackendUnavailableError` of an attempt or release naming the lock directory
 * that could not be used (the file-system error stays the `cause`).
 */
export function namingDirectory(directory: string): (error: unknown) => never {
  const named = `the lock directory ${directory} cannot be used: `;
  return (error) => {
    if (!BackendUnavailableError.isInstance(error) || error.message.includes(named)) throw error;
    const detail = error.message.replace(/^File lock backend: /, '');
    throw new BackendUnavailableError(`File lock backend: ${named}${detail}`, {
      cause: error.cause ?? error,
      retryable: error.retryable,
    });
  };
}

const openFlags = fs.constants.O_RDWR | fs.constants.O_CREAT;

function settle<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Synchronous calls wrapped in settled promises. */
export const syncFileOps: FileOps = {
  mkdir: (path) => settle(() => fs.mkdirSync(path)),
  mkdirp: (path) => settle(() => void fs.mkdirSync(path, { recursive: true })),
  rmdir: (path) => settle(() => fs.rmdirSync(path)),
  rename: (from, to) => settle(() => fs.renameSync(from, to)),
  touch: (path, epochMs) => settle(() => fs.utimesSync(path, epochMs / 1000, epochMs / 1000)),
  mtimeMs: (path) => settle(() => fs.statSync(path).mtimeMs),
  readdir: (path) => settle(() => fs.readdirSync(path)),
  openFile: (path) => settle(() => fs.openSync(path, openFlags, 0o644)),
  closeFile: (fd) => settle(() => fs.closeSync(fd)),
  writeFile: (path, text) => settle(() => fs.writeFileSync(path, text)),
  readFile: (path) => settle(() => fs.readFileSync(path, 'utf8')),
  unlink: (path) => settle(() => fs.unlinkSync(path)),
  removeTree: (path) => settle(() => fs.rmSync(path, { recursive: true, force: true })),
};

function call<T>(start: (done: (error: Error | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    start((error, value) => (error ? reject(error) : resolve(value as T)));
  });
}

/** Thread-pool calls (callback API: cheaper than `fs/promises`). */
export const asyncFileOps: FileOps = {
  mkdir: (path) => call<void>((done) => fs.mkdir(path, (error) => done(error))),
  mkdirp: (path) => call<void>((done) => fs.mkdir(path, { recursive: true }, (e) => done(e))),
  rmdir: (path) => call<void>((done) => fs.rmdir(path, done)),
  rename: (from, to) => call<void>((done) => fs.rename(from, to, done)),
  touch: (path, epochMs) =>
    call<void>((done) => fs.utimes(path, epochMs / 1000, epochMs / 1000, done)),
  mtimeMs: (path) => call<fs.Stats>((done) => fs.stat(path, done)).then((stats) => stats.mtimeMs),
  readdir: (path) => call<string[]>((done) => fs.readdir(path, done)),
  openFile: (path) => call<number>((done) => fs.open(path, openFlags, 0o644, done)),
  closeFile: (fd) => call<void>((done) => fs.close(fd, done)),
  writeFile: (path, text) => call<void>((done) => fs.writeFile(path, text, done)),
  readFile: (path) => call<string>((done) => fs.readFile(path, 'utf8', done)),
  unlink: (path) => call<void>((done) => fs.unlink(path, done)),
  removeTree: (path) =>
    call<void>((done) => fs.rm(path, { recursive: true, force: true }, (e) => done(e))),
};

/** The FileOps for an `io` mode. */
export function fileOpsFor(io: FileIo): FileOps {
  return io === 'sync' ? syncFileOps : asyncFileOps;
}
