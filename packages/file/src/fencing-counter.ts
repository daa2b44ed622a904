/**
 * The fencing counter: the NAME of one empty file per key, `<key>/fence.<token>`, the last
 * token handed out. Only the holder of the key's lock directory (the mutex's `lock`, or the
 * `gate` of an RW lock or semaphore) draws, by renaming `fence.<n>` to `fence.<n + 1>`.
 *
 * The rename is a compare-and-swap: it fails (ENOENT) unless the counter still stands at `n`.
 * A holder that stalled (SIGSTOP, a long GC) between learning `n` and renaming, while a
 * contender found its lock stale, took it over and drew on, finds `fence.<n>` gone and gets
 * no token from it: the counter never goes back, whatever the timing. (A counter kept as file
 * content cannot promise that: a write of `n + 1` that was held up lands after the newer
 * values and rewinds them; the chaos run caught exactly that.) A holder that may have stalled
 * after its draw checks its marker is still in place before it uses the token.
 *
 * A rename is atomic, so a process killed at any moment leaves the old name or the new one.
 * lockkit never deletes the counter, so it survives releases, expiries, crashes and restarts.
 * It is not fsync'ed: after a power loss the file system may roll the last renames back. A
 * `fence` file holding a 20-digit record (the counter of earlier lockkit versions) is taken
 * over on first use.
 *
 * @module
 */
import { BackendUnavailableError } from '@lockkit/core';
import { type FileOps, isMissing, unavailable } from './file-system.js';
import { childPath, FENCE_FILE } from './lock-paths.js';

const COUNTER_NAME = /^fence\.(\d{1,20})$/;

/** The counter file's name for `value`. */
export function counterName(value: bigint): string {
  return `${FENCE_FILE}.${value}`;
}

/**
 * The fencing counter's value (the last token handed out) from a key directory's entry names;
 * undefined if there is no counter yet.
 */
export function fencingCounterOf(names: readonly string[]): bigint | undefined {
  let value: bigint | undefined;
  for (const name of names) {
    const match = COUNTER_NAME.exec(name);
    if (!match) continue;
    const found = BigInt(match[1] as string);
    if (value === undefined || found > value) value = found;
  }
  return value;
}

/**
 * The counters of one provider. It remembers the last value it saw per key, so a holder that
 * drew last time draws again with one rename; after another process drew, that rename fails
 * and the directory is read once.
 */
export class FencingCounters {
  readonly #fs: FileOps;
  readonly #last = new Map<string, bigint>();
  readonly #maxRemembered: number;

  constructor(fs: FileOps, maxRemembered = 1000) {
    this.#fs = fs;
    this.#maxRemembered = maxRemembered;
  }

  /** Draws the next token of the counter in `keyDir` (creating both if needed). */
  async next(keyDir: string): Promise<bigint> {
    // A failed rename means someone else drew since we looked: a stalled former holder's
    // draw can land between ours at most once per stall, so a few rounds always settle it.
    for (let round = 0; round < 4; round++) {
      const current = this.#last.get(keyDir) ?? (await this.#read(keyDir));
      const token = current + 1n;
      try {
        await this.#fs.rename(
          childPath(keyDir, counterName(current)),
          childPath(keyDir, counterName(token)),
        );
      } catch (error) {
        this.#last.delete(keyDir);
        if (isMissing(error)) continue;
        throw unavailable(`update the fencing counter in ${keyDir}`, error);
      }
      this.#remember(keyDir, token);
      return token;
    }
    throw new BackendUnavailableError(
      `The fencing counter in ${keyDir} kept moving while this process held its lock ` +
        '(another process draws from it: is a lock directory shared without its lock?)',
    );
  }

  /** Forgets what it remembered (nothing is held open). */
  async close(): Promise<void> {
    this.#last.clear();
  }

  #remember(keyDir: string, value: bigint): void {
    this.#last.delete(keyDir); // most recently used goes last
    this.#last.set(keyDir, value);
    if (this.#last.size > this.#maxRemembered) {
      const oldest = this.#last.keys().next().value;
      if (oldest !== undefined) this.#last.delete(oldest);
    }
  }

  /** The counter's value on disk; creates the counter (and `keyDir`) if there is none. */
  async #read(keyDir: string): Promise<bigint> {
    const fs = this.#fs;
    let names: string[];
    try {
      names = await fs.readdir(keyDir);
    } catch (error) {
      if (!isMissing(error)) throw unavailable(`read ${keyDir}`, error);
      await fs.mkdirp(keyDir).catch((e: unknown) => {
        throw unavailable(`mkdir ${keyDir}`, e);
      });
      names = [];
    }
    const value = fencingCounterOf(names);
    if (value !== undefined) return value;
    // A new counter: an empty fence.0 (opening creates it; someone else may just have).
    const first = childPath(keyDir, counterName(0n));
    const fd = await fs.openFile(first).catch((e: unknown) => {
      throw unavailable(`create ${first}`, e);
    });
    await fs.closeFile(fd).catch(() => undefined);
    return 0n;
  }
}
