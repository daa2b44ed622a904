/**
 * Notified waiting. One `fs.watch` per key directory per provider, shared by every waiter on
 * that key; a release (the lock directory removed, a reader's or permit's marker moved out)
 * is a `rename` event there and wakes the waiters at once. `fs.watch` is a hint only (it does
 * not see other machines' changes on network file systems): core's safety poll backs it up,
 * and each watch also wakes itself when the current holder's heartbeat would turn stale, so
 * an abandoned lock is taken over on time without polling faster.
 *
 * @module
 */
import { type FSWatcher, stat, watch } from 'node:fs';
import { sep } from 'node:path';
import { now, type ReleaseWatch, Wakeup } from '@lockkit/core/backend';
import { FENCE_FILE } from './lock-paths.js';

interface WatchedDirectory {
  watcher: FSWatcher | undefined;
  readonly listeners: Set<() => void>;
}

/** Shared `fs.watch` handles, one per watched directory, closed with their last listener. */
export class DirectoryWatchers {
  readonly #directories = new Map<string, WatchedDirectory>();

  /** Calls `listener` on every change of an entry of `dir`; returns the unsubscribe function. */
  subscribe(dir: string, listener: () => void): () => void {
    let entry = this.#directories.get(dir);
    if (!entry) {
      entry = { watcher: undefined, listeners: new Set() };
      this.#directories.set(dir, entry);
    }
    // (Re)open: the first subscriber, or after the directory was removed and re-created.
    entry.watcher ??= this.#open(dir, entry);
    const watched = entry;
    watched.listeners.add(listener);
    return () => {
      watched.listeners.delete(listener);
      if (watched.listeners.size > 0 || this.#directories.get(dir) !== watched) return;
      this.#directories.delete(dir);
      watched.watcher?.close();
    };
  }

  /** Closes every watcher (provider close). */
  closeAll(): void {
    for (const entry of this.#directories.values()) entry.watcher?.close();
    this.#directories.clear();
  }

  /** Number of open `fs.watch` handles (for tests). */
  get size(): number {
    let open = 0;
    for (const entry of this.#directories.values()) if (entry.watcher) open += 1;
    return open;
  }

  #open(dir: string, entry: WatchedDirectory): FSWatcher | undefined {
    const notify = (): void => {
      for (const listener of [...entry.listeners]) listener();
    };
    try {
      const watcher = watch(dir, { persistent: true }, (eventType, filename) => {
        // Directories report every change as 'rename' — creation, removal, and a heartbeat's
        // new mtime alike — so only an entry that is gone is a release: a lock directory
        // removed, a marker moved out. The fencing counter (`fence.<n>`, renamed on every
        // grant) is not one.
        if (eventType !== 'rename' || filename?.startsWith(FENCE_FILE)) return;
        if (typeof filename !== 'string') return notify(); // no name given: assume a release
        stat(dir + sep + filename, (error) => {
          if (error) notify();
        });
      });
      watcher.on('error', () => {
        // The directory went away (or the watch broke): fall back to the safety poll.
        watcher.close();
        if (entry.watcher === watcher) entry.watcher = undefined;
        notify();
      });
      return watcher;
    } catch {
      return undefined; // no inotify watch available, or the directory is gone: poll
    }
  }
}

const MAX_DELAY_MS = 2 ** 31 - 1;

/** A waiter's subscription: fs.watch events plus a timer for "the holder turns stale". */
export class FileReleaseWatch implements ReleaseWatch {
  readonly #wakeup = new Wakeup();
  readonly #unsubscribe: () => void;
  readonly #onClose: () => void;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(watchers: DirectoryWatchers, dir: string, onClose: () => void) {
    this.#unsubscribe = watchers.subscribe(dir, () => this.#wakeup.notify());
    this.#onClose = onClose;
  }

  next(signal: AbortSignal): Promise<void> {
    return this.#wakeup.next(signal);
  }

  /** Wake at wall-clock time `wallMs` (the earliest requested time wins). */
  wakeAtWall(wallMs: number | undefined): void {
    if (wallMs !== undefined) this.wakeAt(now() + (wallMs - Date.now()));
  }

  /** Wake at performance.now() time `at` (the earliest requested time wins). */
  wakeAt(at: number): void {
    if (this.#closed || !(at < this.#timerAt)) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.#wakeup.notify();
      },
      Math.min(MAX_DELAY_MS, Math.max(0, at - now())),
    );
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#unsubscribe();
    this.#wakeup.close();
    this.#onClose();
  }
}
