import { dirname, sep } from 'node:path';
import { now } from '@lockkit/core/backend';
import lockfile from 'proper-lockfile';
import {
  errorCode,
  type FileIo,
  type FileOps,
  isMissing,
  isOccupied,
  unavailable,
} from './file-system.js';
import { recordPath, removeRecord } from './hold-records.js';
import { claimMarker } from './holder-markers.js';
import { type Callback, type LibraryFs, libraryFs } from './library-fs.js';
import { childPath } from './lock-paths.js';
import type { Spare, SparePool } from './spare-pool.js';
import type { Staleness } from './staleness.js';

/** One lock directory we hold (or are landing). */
export interface Holding {
  readonly lockDir: string;
  /** Our marker inside the lock directory: its presence is our ownership. */
  readonly marker: string;
  /** performance.now() when the lock directory's mtime was last set (landing or heartbeat). */
  lastBeat: number;
  /** Heartbeats are allowed (false once the handle lets go, and for autoExtend: false). */
  beating: boolean;
  /** proper-lockfile reported the lock compromised. */
  compromised: unknown;
  /** Where a compromise is reported (core's lost signal), while a handle watches. */
  onLost: ((reason: string, cause?: unknown) => void) | undefined;
  /** proper-lockfile's release function. */
  unlock: (() => Promise<void>) | undefined;
}

/** Outcome of one attempt: the holding, or when to look again (wall-clock ms, if known). */
export type TakeResult =
  | { readonly holding: Holding; readonly retryAtWall?: undefined }
  | { readonly holding?: undefined; readonly retryAtWall: number | undefined };

/** What the lock directories need from the provider. */
export interface LockDirContext {
  readonly fs: FileOps;
  readonly pool: SparePool;
  readonly staleness: Staleness;
}

/** The lock directories of one provider. */
export class LockDirs {
  readonly #context: LockDirContext;
  readonly #holdings = new Map<string, Holding>();
  /** Shared by every lock() call (proper-lockfile caches the mtime precision on it). */
  readonly #sharedFs: LibraryFs;
  readonly #leaseMs: number;
  readonly #updateMs: number;

  constructor(context: LockDirContext, io: FileIo) {
    this.#context = context;
    this.#leaseMs = context.staleness.leaseMs;
    // proper-lockfile keeps `update` within [1000, stale / 2].
    this.#updateMs = Math.max(1000, Math.floor(this.#leaseMs / 3));
    this.#sharedFs = libraryFs(io);
  }

  /** The lease's end (performance.now()) as of the last heartbeat. */
  validUntil(holding: Holding): number {
    return holding.lastBeat + this.#leaseMs - Math.min(1000, this.#leaseMs / 10);
  }

  /** The holding whose marker is `marker`, if we still think we hold it. */
  holding(marker: string): Holding | undefined {
    return this.#holdings.get(marker);
  }

  /**
   * Lets proper-lockfile probe the file system's mtime precision once (it caches the result
   * on the `fs` object every lock() call inherits from), on a scratch directory.
   */
  async warmUp(scratchDir: string): Promise<void> {
    const release = await lockfile.lock(scratchDir, {
      lockfilePath: scratchDir,
      realpath: false,
      stale: this.#leaseMs,
      fs: this.#sharedFs,
      onCompromised: () => undefined,
    });
    await release();
  }

  /** True if we still hold `holding`: not compromised, and our marker is in place. */
  async confirm(holding: Holding): Promise<boolean> {
    if (holding.compromised !== undefined || this.#holdings.get(holding.marker) !== holding) {
      return false;
    }
    try {
      await this.#context.fs.mtimeMs(holding.marker);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw unavailable(`stat ${holding.marker}`, error);
    }
  }

  /**
   * One attempt to take the lock directory through proper-lockfile. A holder that
   * proper-lockfile finds stale is claimed here (exactly one contender wins), then we try
   * again; gives up after a few rounds of churn.
   */
  async take(lockDir: string): Promise<TakeResult> {
    for (let round = 0; round < 3; round++) {
      const spare = await this.#context.pool.takeSpare();
      const holding: Holding = {
        lockDir,
        marker: childPath(lockDir, spare.markerName),
        lastBeat: Number.NEGATIVE_INFINITY,
        beating: true,
        compromised: undefined,
        onLost: undefined,
        unlock: undefined,
      };
      const landing = { spare, landed: false, lost: false };
      // proper-lockfile keeps this call's `fs` for the lock's lifetime: its mkdir lands our
      // spare, its utimes is this holding's heartbeat.
      const callFs: LibraryFs = Object.create(this.#sharedFs);
      callFs.mkdir = (path, callback) => {
        this.#land(landing, holding, path).then(() => callback(null), callback);
      };
      callFs.utimes = (path, atime, mtime, callback) => {
        this.#heartbeat(holding, path, atime, mtime, callback);
      };
      try {
        holding.unlock = await lockfile.lock(holding.marker, {
          lockfilePath: lockDir,
          realpath: false,
          retries: 0,
          stale: this.#leaseMs,
          update: this.#updateMs,
          fs: callFs,
          onCompromised: (error) => this.#compromised(holding, error),
        });
        return { holding };
      } catch (error) {
        if (landing.landed) {
          // Landed, then proper-lockfile failed (its precision probe): give it back.
          await this.release(holding).catch(() => false);
        } else if (!landing.lost) {
          this.#context.pool.giveSpare(spare);
        }
        const code = errorCode(error);
        if (code === 'ELOCKED' || isOccupied(error)) {
          // ELOCKED: held and fresh by proper-lockfile's rule. ENOTEMPTY/EEXIST: stale by its
          // rule, and its rmdir refused because the holder's marker is inside.
          const retryAtWall = await this.#takeOverIfStale(lockDir);
          if (retryAtWall !== undefined) return { retryAtWall };
          continue;
        }
        throw unavailable(`lock ${lockDir}`, error);
      }
    }
    return { retryAtWall: undefined };
  }

  /**
   * Ownership-checked release: claims our marker (false if it is gone: not ours any more),
   * then lets proper-lockfile stop the heartbeat and remove the empty directory (which wakes
   * waiters watching the key).
   */
  async release(holding: Holding): Promise<boolean> {
    holding.beating = false;
    holding.onLost = undefined;
    if (this.#holdings.get(holding.marker) === holding) this.#holdings.delete(holding.marker);
    const owned = await claimMarker(this.#context, holding.marker);
    const unlock = holding.unlock;
    holding.unlock = undefined;
    let removed = false;
    if (unlock) {
      // Rejects if proper-lockfile already gave the lock up (compromised).
      removed = await unlock().then(
        () => true,
        () => false,
      );
    }
    if (owned && !removed) {
      // An empty lock directory is a free lock; removing it is the wake-up for waiters.
      await this.#context.fs.rmdir(holding.lockDir).catch(() => undefined);
    }
    return owned;
  }

  /** Renames `landing.spare` onto `lockDir` (proper-lockfile's mkdir). EEXIST if held. */
  async #land(
    landing: { spare: Spare; landed: boolean; lost: boolean },
    holding: Holding,
    lockDir: string,
  ): Promise<void> {
    const { fs, pool, staleness } = this.#context;
    for (let attempt = 0; ; attempt++) {
      const { spare } = landing;
      try {
        // The directory's mtime is the lease: it must be fresh the moment it lands.
        if (now() - spare.touchedAt > Math.min(1000, staleness.leaseMs / 4)) {
          await fs.touch(spare.dir, Date.now());
          spare.touchedAt = now();
        }
        await fs.rename(spare.dir, lockDir);
        landing.landed = true;
        holding.lastBeat = spare.touchedAt;
        this.#holdings.set(holding.marker, holding);
        return;
      } catch (error) {
        if (isOccupied(error)) {
          throw Object.assign(new Error(`${lockDir} is held`), { code: 'EEXIST' });
        }
        if (!isMissing(error) || attempt >= 2) throw unavailable(`rename onto ${lockDir}`, error);
        if (attempt === 0) {
          // First use of this key: its directory does not exist yet.
          const keyDir = dirname(lockDir);
          await fs.mkdirp(keyDir).catch((e: unknown) => {
            throw unavailable(`mkdir ${keyDir}`, e);
          });
        } else {
          // Our spare was removed behind our back, and with it the marker name we registered
          // with proper-lockfile: give up this attempt (the caller's next one starts afresh).
          landing.lost = true;
          pool.forget(spare);
          throw unavailable(`rename onto ${lockDir}`, error);
        }
      }
    }
  }

  /**
   * proper-lockfile's heartbeat, withheld when it would be a lie. It sets the mtime of
   * `<our marker>/..`, not of `path`: proper-lockfile checked `path`'s mtime a moment ago, and
   * if we were taken over since (held up past the lease), `path` is the new holder's directory,
   * whose lease our stale stamp would cut short. The kernel resolves `..` from the marker
   * itself, so the call reaches only the directory our marker is in, or fails with ENOENT once
   * it has been claimed (proper-lockfile then reports the lock compromised: our lost signal).
   */
  #heartbeat(holding: Holding, path: string, atime: Date, mtime: Date, callback: Callback): void {
    const at = now();
    if (!holding.beating || at >= this.validUntil(holding)) {
      callback(
        Object.assign(new Error(`heartbeat of ${path} withheld: the lease has ended`), {
          code: 'ELEASEENDED',
        }),
      );
      return;
    }
    // String concatenation: path.join would fold the `..` away.
    this.#sharedFs.utimes(`${holding.marker}${sep}..`, atime, mtime, (error) => {
      if (!error) holding.lastBeat = at;
      callback(error);
    });
  }

  #compromised(holding: Holding, error: unknown): void {
    holding.compromised = error;
    holding.beating = false;
    const lose = holding.onLost;
    holding.onLost = undefined;
    lose?.(
      'proper-lockfile reported the lock directory compromised (removed, replaced or not refreshed in time)',
      error,
    );
  }

  /**
   * After proper-lockfile declined: if the holder is stale by our rule (which allows for
   * coarse timestamps and clocks set back), claim its marker and resolve undefined (try
   * again); otherwise resolve the wall-clock time it turns stale.
   */
  async #takeOverIfStale(lockDir: string): Promise<number | undefined> {
    const { fs, staleness } = this.#context;
    let names: string[];
    let mtimeMs: number;
    try {
      // Markers first, then the mtime: a marker we claim is in the directory we judged.
      names = await fs.readdir(lockDir);
      mtimeMs = await fs.mtimeMs(lockDir);
    } catch (error) {
      if (isMissing(error)) return undefined; // released meanwhile: try again
      throw unavailable(`inspect ${lockDir}`, error);
    }
    if (!staleness.isStale(mtimeMs)) return staleness.staleAt(mtimeMs);
    for (const name of names) {
      if (!(await claimMarker(this.#context, childPath(lockDir, name)))) continue;
      await removeRecord(this.#context.fs, recordPath(dirname(lockDir), name));
    }
    return undefined;
  }
}
