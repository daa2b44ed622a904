/**
 * The fencing counter: one small file per key (`<key>/fence`) holding the last token as 20
 * decimal digits and a newline. It is only ever read and rewritten by the holder of the
 * key's lock directory (the mutex's `lock`, or the `gate` of an RW lock or semaphore), so
 * no two processes update it at once; a holder that may have stalled past its lease during
 * the update checks that its marker is still in place before it uses the token.
 *
 * The new value is written with ONE `write` at offset 0, of the same length as the old one: a
 * process killed at any moment (even SIGKILL mid-update) leaves either the old or the new
 * value, never a mix and never a smaller number. lockkit never deletes the file, so the
 * counter survives releases, expiries, crashes and restarts. It is not fsync'ed: after a
 * power loss the file system may roll it back to its last flushed state.
 *
 * @module
 */
import { BackendUnavailableError } from '@lockkit/core';
import { type FileOps, isMissing, unavailable } from './file-system.js';

const DIGITS = 20;
const RECORD = /^(\d{20})\n$/;

/** Parses the counter file's content ('' for a new file). */
export function parseCounter(content: string, path: string): bigint {
  if (content === '') return 0n;
  const match = RECORD.exec(content);
  if (!match) {
    throw new BackendUnavailableError(
      `Fencing counter ${path} is corrupt (${JSON.stringify(content.slice(0, 32))}); ` +
        'restore it, or replace it with a value above every token handed out',
    );
  }
  return BigInt(match[1]!);
}

/** The counter file's content for `value`. */
export function formatCounter(value: bigint): string {
  return `${value.toString().padStart(DIGITS, '0')}\n`;
}

interface OpenCounter {
  readonly fd: Promise<number>;
  users: number;
  retired: boolean;
  closed: boolean;
}

/**
 * The counters of one provider. Files stay open between uses (a few, least recently used
 * first out) so an increment is one read and one write; `close()` closes them all.
 */
export class FencingCounters {
  readonly #fs: FileOps;
  readonly #open = new Map<string, OpenCounter>();
  readonly #closing = new Set<Promise<unknown>>();
  readonly #maxOpen: number;

  constructor(fs: FileOps, maxOpen = 16) {
    this.#fs = fs;
    this.#maxOpen = maxOpen;
  }

  /** Increments the counter at `fenceFile` (creating it, and `keyDir`, if needed). */
  async next(fenceFile: string, keyDir: string): Promise<bigint> {
    let counter = this.#use(fenceFile, keyDir);
    if (await this.#deleted(counter)) {
      // Someone deleted the file (or its whole directory): a kept descriptor would go on
      // counting in the orphan while other processes count in the new file.
      this.#release(fenceFile, counter);
      counter = this.#use(fenceFile, keyDir);
    }
    try {
      const fd = await counter.fd;
      const token = parseCounter(await this.#fs.readHead(fd), fenceFile) + 1n;
      await this.#fs.writeHead(fd, formatCounter(token));
      return token;
    } catch (error) {
      counter.retired = true;
      if (this.#open.get(fenceFile) === counter) this.#open.delete(fenceFile);
      if (BackendUnavailableError.isInstance(error)) throw error;
      throw unavailable(`update ${fenceFile}`, error);
    } finally {
      this.#release(fenceFile, counter, false);
    }
  }

  async #deleted(counter: OpenCounter): Promise<boolean> {
    try {
      return await this.#fs.isUnlinked(await counter.fd);
    } catch {
      return false; // an open failure is reported by next()
    }
  }

  /** Ends one use; `retire` also takes the counter out of the cache. */
  #release(fenceFile: string, counter: OpenCounter, retire = true): void {
    counter.users -= 1;
    if (retire) this.#retire(fenceFile, counter);
    else if (counter.retired) this.#closeFd(counter);
  }

  /** Closes every open counter file (nothing may be in use). */
  async close(): Promise<void> {
    for (const [path, counter] of [...this.#open]) this.#retire(path, counter);
    while (this.#closing.size > 0) await Promise.all(this.#closing);
  }

  #use(fenceFile: string, keyDir: string): OpenCounter {
    let counter = this.#open.get(fenceFile);
    if (counter) {
      this.#open.delete(fenceFile); // most recently used goes last
    } else {
      counter = { fd: this.#openFile(fenceFile, keyDir), users: 0, retired: false, closed: false };
      counter.fd.catch(() => undefined);
    }
    this.#open.set(fenceFile, counter);
    counter.users += 1;
    for (const [path, old] of this.#open) {
      if (this.#open.size <= this.#maxOpen) break;
      if (old.users === 0) this.#retire(path, old);
    }
    return counter;
  }

  async #openFile(fenceFile: string, keyDir: string): Promise<number> {
    try {
      return await this.#fs.openFile(fenceFile);
    } catch (error) {
      if (!isMissing(error)) throw unavailable(`open ${fenceFile}`, error);
      await this.#fs.mkdirp(keyDir).catch((e: unknown) => {
        throw unavailable(`mkdir ${keyDir}`, e);
      });
      return await this.#fs.openFile(fenceFile).catch((e: unknown) => {
        throw unavailable(`open ${fenceFile}`, e);
      });
    }
  }

  /** Takes a counter out of the cache; its file is closed once nobody uses it. */
  #retire(fenceFile: string, counter: OpenCounter): void {
    if (this.#open.get(fenceFile) === counter) this.#open.delete(fenceFile);
    counter.retired = true;
    this.#closeFd(counter);
  }

  /** Closes a retired counter's file once its last user is done (exactly once). */
  #closeFd(counter: OpenCounter): void {
    if (counter.users > 0 || counter.closed) return;
    counter.closed = true;
    const closing = counter.fd.then(
      (fd) => this.#fs.closeFile(fd).catch(() => undefined),
      () => undefined,
    );
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
  }
}
