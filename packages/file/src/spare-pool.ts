/**
 * Prepared directories. Taking a lock is ONE rename of a prepared directory (which already
 * contains its owner marker) onto the lock path: the lock directory is never visible empty,
 * so nobody can mistake a lock being created for a free or stale one (proper-lockfile's
 * mkdir-then-write window). Markers released or claimed come back here and are reused, so a
 * steady acquire/release cycle creates one directory and removes one, like proper-lockfile.
 *
 * @module
 */
import { now } from '@lockkit/core/backend';
import { type FileOps, isMissing, unavailable } from './file-system.js';
import { childPath, freshMarkerName } from './lock-paths.js';

/** A prepared lock directory: `dir` contains exactly one marker directory, `markerName`. */
export interface Spare {
  readonly dir: string;
  readonly markerName: string;
  /** performance.now() when the mtime of `dir` was last set (the lease starts from it). */
  touchedAt: number;
}

/** Spare and bare (empty) directories inside `<directory>/.spares`, owned by one provider. */
export class SparePool {
  readonly sparesDir: string;
  readonly #fs: FileOps;
  readonly #bares: string[] = [];
  readonly #spares: Spare[] = [];
  readonly #maxKept: number;
  readonly #background = new Set<Promise<unknown>>();

  constructor(fs: FileOps, sparesDir: string, maxKept = 64) {
    this.#fs = fs;
    this.sparesDir = sparesDir;
    this.#maxKept = maxKept;
  }

  /** A new, unused path inside the spares directory. */
  freshPath(): string {
    return childPath(this.sparesDir, freshMarkerName());
  }

  /** An empty directory (reused, or created). */
  async takeBare(): Promise<string> {
    const reused = this.#bares.pop();
    if (reused !== undefined) return reused;
    const path = this.freshPath();
    try {
      await this.#fs.mkdir(path);
    } catch (error) {
      if (!isMissing(error)) throw unavailable(`mkdir ${path}`, error);
      await this.#fs.mkdirp(this.sparesDir).catch((e: unknown) => {
        throw unavailable(`mkdir ${this.sparesDir}`, e);
      });
      await this.#fs.mkdir(path).catch((e: unknown) => {
        throw unavailable(`mkdir ${path}`, e);
      });
    }
    return path;
  }

  /** A prepared lock directory (reused, or built from two bare directories). */
  async takeSpare(): Promise<Spare> {
    const reused = this.#spares.pop();
    if (reused) return reused;
    for (let attempt = 0; ; attempt++) {
      const dir = await this.takeBare();
      const markerName = freshMarkerName();
      const marker = childPath(dir, markerName);
      const inner = this.#bares.pop();
      if (inner !== undefined) {
        try {
          const touchedAt = now(); // adding the marker sets the directory's mtime
          await this.#fs.rename(inner, marker);
          return { dir, markerName, touchedAt };
        } catch {
          // That reused directory vanished: make a fresh marker instead.
        }
      }
      try {
        const touchedAt = now();
        await this.#fs.mkdir(marker);
        return { dir, markerName, touchedAt };
      } catch (error) {
        if (!isMissing(error) || attempt > 0) throw unavailable(`mkdir ${marker}`, error);
        // Our kept directories were removed behind our back (the tree was deleted): start over.
        this.forgetKept();
      }
    }
  }

  /** Drops every kept directory from memory (they are gone from disk). */
  forgetKept(): void {
    this.#bares.length = 0;
    this.#spares.length = 0;
  }

  /** Returns an empty directory for reuse. */
  giveBare(path: string): void {
    if (this.#bares.length < this.#maxKept) this.#bares.push(path);
    else this.#track(this.#fs.rmdir(path));
  }

  /** Returns a spare that was not used (the lock was busy). */
  giveSpare(spare: Spare): void {
    if (this.#spares.length < this.#maxKept) this.#spares.push(spare);
    else this.#track(this.#fs.removeTree(spare.dir));
  }

  /** Forgets a spare that turned out to be broken (removed behind our back). */
  forget(spare: Spare): void {
    this.#track(this.#fs.removeTree(spare.dir));
  }

  /** Paths of every kept directory (for the exit hook). */
  keptPaths(): string[] {
    return [...this.#bares, ...this.#spares.map((spare) => spare.dir)];
  }

  /** Removes every kept directory (at provider close). */
  async clear(): Promise<void> {
    const paths = [...this.#bares.splice(0), ...this.#spares.splice(0).map((spare) => spare.dir)];
    for (const path of paths) this.#track(this.#fs.removeTree(path));
    while (this.#background.size > 0) await Promise.all(this.#background);
  }

  #track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.#background.add(settled);
    void settled.then(() => this.#background.delete(settled));
  }
}
