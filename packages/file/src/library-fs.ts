/**
 * The file-system calls proper-lockfile makes (its `fs` option), as plain callbacks over
 * node:fs: asynchronous, or synchronous calls answered through the callback (`io: 'sync'`).
 *
 * @module
 */
import * as nodeFs from 'node:fs';
import type { FileIo } from './file-system.js';

export type Callback<T = void> = (error: NodeJS.ErrnoException | null, value?: T) => void;

/** The file-system calls proper-lockfile makes (its `fs` option). */
export interface LibraryFs {
  mkdir(path: string, callback: Callback): void;
  stat(path: string, callback: Callback<nodeFs.Stats>): void;
  utimes(path: string, atime: Date, mtime: Date, callback: Callback): void;
  rmdir(path: string, callback: Callback): void;
  rmdirSync(path: string): void;
  realpath(path: string, callback: Callback<string>): void;
}

const callbackFs = {
  stat: nodeFs.stat,
  // Looked up at each call (not captured at load), so a test can hold it with a spy.
  utimes: (path: string, atime: Date, mtime: Date, callback: Callback) =>
    nodeFs.utimes(path, atime, mtime, callback),
  rmdir: nodeFs.rmdir,
  realpath: nodeFs.realpath,
};

function syncCall<T>(run: () => T, callback: Callback<T>): void {
  let value: T;
  try {
    value = run();
  } catch (error) {
    callback(error as NodeJS.ErrnoException);
    return;
  }
  callback(null, value);
}

const syncFs = {
  stat: (path: string, callback: Callback<nodeFs.Stats>) =>
    syncCall(() => nodeFs.statSync(path), callback),
  utimes: (path: string, atime: Date, mtime: Date, callback: Callback) =>
    syncCall(() => nodeFs.utimesSync(path, atime, mtime), callback),
  rmdir: (path: string, callback: Callback) => syncCall(() => nodeFs.rmdirSync(path), callback),
  realpath: (path: string, callback: Callback<string>) =>
    syncCall(() => nodeFs.realpathSync(path), callback),
};

/** The `fs` proper-lockfile gets for this provider's `io` mode. */
export function libraryFs(io: FileIo): LibraryFs {
  return {
    ...(io === 'sync' ? syncFs : callbackFs),
    mkdir: (path, callback) => nodeFs.mkdir(path, (error) => callback(error)),
    rmdirSync: (path) => nodeFs.rmdirSync(path),
  };
}
