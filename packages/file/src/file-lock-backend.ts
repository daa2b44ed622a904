import type { Capabilities, LockKind } from '@lockkit/core';
import {
  type BackendLockState,
  type LockBackend,
  type LockRequest,
  memoizeKeys,
  now,
  type ReleaseWatch,
  type WaitContext,
} from '@lockkit/core/backend';
import { createFileLockContext } from './create-context.js';
import { onProcessExit, releaseSync, removeSync } from './exit-cleanup.js';
import type { FileGrant, FileLockContext } from './file-lock-context.js';
import { fileCapabilities, type ResolvedFileOptions } from './file-lock-options.js';
import { namingDirectory } from './file-system.js';
import { attemptKind } from './gated-locks.js';
import { recordGrant, removeRecord } from './hold-records.js';
import { claimMarker, touchMarker } from './holder-markers.js';
import { breakKey, inspectKey } from './lock-admin.js';
import { type KeyPaths, keyPaths } from './lock-paths.js';
import { ParkedGates } from './parked-gates.js';
import { prepareDirectory } from './prepare-directory.js';
import { DirectoryWatchers, FileReleaseWatch } from './release-watch.js';
import { WriterIntent } from './writer-intent.js';

interface WaitState {
  readonly watch: FileReleaseWatch;
  readonly paths: KeyPaths;
  /** A writer's gate, kept between attempts while readers drain. */
  pendingGate: string | undefined;
  /** A writer's intent marker: new readers stay out while it waits. */
  readonly intent: WriterIntent | undefined;
  /** The attempt in flight (a pending gate is released only after it settles). */
  busy: Promise<unknown>;
}

export type { FileGrant } from './file-lock-context.js';

const noop = (): void => undefined;

/**
 * The file-system {@link LockBackend}: hardened mkdir-style lock directories with an mtime
 * heartbeat (see holder-markers.ts), gates and holder markers for RW locks and semaphores
 * (gated-locks.ts), an on-disk fencing counter, and `fs.watch` wake-ups.
 */
export class FileLockBackend implements LockBackend<FileGrant> {
  readonly backend = 'file';
  readonly capabilities: Capabilities;
  readonly pollIntervalMs: number;
  readonly options: ResolvedFileOptions;
  readonly #context: FileLockContext;
  readonly #watchers = new DirectoryWatchers();
  readonly #waits = new Map<LockRequest, WaitState>();
  /** The paths of a request (memoised: the key directory's name hashes the lock name). */
  readonly #pathsOf: (request: LockRequest) => KeyPaths = memoizeKeys((request) =>
    keyPaths(this.options.directory, request.namespace, request.kind, request.name),
  );
  readonly #work = new Set<Promise<unknown>>();
  readonly #leaseEnds = new WeakMap<FileGrant, number>();
  /** Grants handed out and not yet released (released synchronously at process exit). */
  readonly #held = new Set<FileGrant>();
  readonly #stopExitCleanup: () => void;
  readonly #parked = new ParkedGates((request, gate) => this.#releaseGate(request, gate));
  readonly #unusable: (error: unknown) => never;
  #ready: Promise<void> | undefined;

  constructor(options: ResolvedFileOptions) {
    this.options = options;
    this.capabilities = fileCapabilities(options.leaseMs);
    this.pollIntervalMs = options.pollIntervalMs;
    this.#unusable = namingDirectory(options.directory);
    this.#context = createFileLockContext(options);
    this.#stopExitCleanup = onProcessExit(() => this.#exitSync());
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<FileGrant | null> {
    const state = this.#waits.get(request);
    const attempt = this.#attempt(request, wait, state);
    if (state) state.busy = attempt;
    return this.#track(attempt).catch(this.#unusable);
  }

  watch(request: LockRequest): ReleaseWatch {
    const paths = this.#pathsOf(request);
    const state: WaitState = {
      paths,
      pendingGate: this.#parked.adopt(request),
      intent: request.kind === 'write' ? new WriterIntent(this.#context, paths.keyDir) : undefined,
      busy: Promise.resolve(),
      watch: new FileReleaseWatch(this.#watchers, paths.keyDir, () => this.#endWait(request)),
    };
    this.#waits.set(request, state);
    return state.watch;
  }

  release(_request: LockRequest, grant: FileGrant): Promise<boolean> {
    this.#held.delete(grant);
    return this.#release(grant).catch(this.#unusable);
  }

  inspect(request: LockRequest): Promise<BackendLockState> {
    return this.#admin(request, inspectKey);
  }

  forceRelease(request: LockRequest): Promise<number> {
    return this.#admin(request, breakKey);
  }

  #admin<T>(
    request: LockRequest,
    run: (context: FileLockContext, paths: KeyPaths, kind: LockKind) => Promise<T>,
  ): Promise<T> {
    const work = this.#ensureReady().then(() =>
      run(this.#context, this.#pathsOf(request), request.kind),
    );
    return this.#track(work).catch(this.#unusable);
  }

  async extend(_request: LockRequest, grant: FileGrant): Promise<number | false> {
    if (grant.lockDir !== undefined) {
      // proper-lockfile refreshes the lock directory; here we confirm it is still ours.
      const { dirs } = this.#context;
      const holding = dirs.holding(grant.marker);
      if (!holding || !(await dirs.confirm(holding))) return false;
      const validUntil = dirs.validUntil(holding);
      return validUntil > now() ? validUntil : false;
    }
    const touchedAt = now();
    // Past the lease (this process stalled), a contender may be claiming the marker right
    // now: refreshing it would only hide that. The lock is lost.
    if (touchedAt >= (this.#leaseEnds.get(grant) ?? Number.POSITIVE_INFINITY)) return false;
    if (!(await touchMarker(this.#context, grant.marker))) return false;
    const validUntil = this.#validUntil(touchedAt);
    this.#leaseEnds.set(grant, validUntil);
    return validUntil;
  }

  /** Reports proper-lockfile's compromise of a lock directory on the handle's signal. */
  monitor(
    _request: LockRequest,
    grant: FileGrant,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void {
    const holding =
      grant.lockDir === undefined ? undefined : this.#context.dirs.holding(grant.marker);
    if (!holding) return noop;
    if (holding.compromised !== undefined) {
      queueMicrotask(() =>
        lose('proper-lockfile reported the lock directory compromised', holding.compromised),
      );
      return noop;
    }
    if (!grant.lease?.autoExtend) holding.beating = false; // the lease is not refreshed
    holding.onLost = lose;
    return () => {
      holding.beating = false;
      if (holding.onLost === lose) holding.onLost = undefined;
    };
  }

  async close(): Promise<void> {
    this.#parked.releaseAll();
    for (const state of [...this.#waits.values()]) state.watch.close();
    while (this.#work.size > 0) await Promise.all(this.#work);
    this.#watchers.closeAll();
    await this.#context.counters.close();
    await this.#context.pool.clear();
    // Tidy the spares directory if no other provider uses it (never fails the close).
    await this.#context.fs.rmdir(this.#context.pool.sparesDir).catch(noop);
    this.#stopExitCleanup();
  }

  /** At process exit: release what is still held, remove our spare directories. */
  #exitSync(): void {
    for (const grant of this.#held) releaseSync(grant.marker, grant.lockDir, grant.record);
    for (const { intent } of this.#waits.values())
      if (intent?.marker) releaseSync(intent.marker, undefined);
    for (const path of this.#context.pool.keptPaths()) removeSync(path);
  }

  /** Open `fs.watch` handles (for tests). */
  get openWatchers(): number {
    return this.#watchers.size;
  }

  async #attempt(
    request: LockRequest,
    wait: WaitContext,
    state: WaitState | undefined,
  ): Promise<FileGrant | null> {
    await this.#ensureReady();
    const context = this.#context;
    const paths = this.#pathsOf(request);
    const pending = state?.pendingGate;
    if (state) state.pendingGate = undefined;
    // Writers and weighted requests keep the gate between attempts whenever core will come
    // back: new readers (or permits) must queue behind them.
    const willWait =
      (request.kind === 'write' || request.kind === 'semaphore') &&
      !wait.signal.aborted &&
      (state ? !state.watch.closed : wait.deadline - now() > 50) &&
      wait.deadline !== Number.NEGATIVE_INFINITY;
    const outcome = await attemptKind(context, paths, request, pending, willWait);
    if (outcome.pendingGate !== undefined) {
      this.#keepGate(request, state, outcome.pendingGate, wait.signal);
    }
    if (!outcome.granted && willWait) await state?.intent?.announce();
    if (outcome.granted) {
      const { granted } = outcome;
      const record = await recordGrant(context.fs, granted, request.owner, () =>
        this.#releaseMarker(granted.marker),
      );
      const grant: FileGrant = {
        fencingToken: granted.fencingToken,
        marker: granted.marker,
        lockDir: granted.lockDir,
        record,
        lease: {
          durationMs: this.options.leaseMs,
          validUntil: this.#validUntil(granted.touchedAt),
          autoExtend: this.options.autoExtend,
        },
      };
      this.#leaseEnds.set(grant, grant.lease!.validUntil);
      this.#held.add(grant);
      return grant;
    }
    state?.watch.wakeAtWall(outcome.retryAtWall);
    return null;
  }

  /** Stores a writer's pending gate until the next attempt (or parks it until the watch). */
  #keepGate(
    request: LockRequest,
    state: WaitState | undefined,
    gate: string,
    signal: AbortSignal,
  ): void {
    if (!state) {
      this.#parked.park(request, gate, signal);
    } else if (!state.watch.closed) {
      state.pendingGate = gate;
    } else {
      this.#releaseGate(request, gate);
      return;
    }
  }

  #releaseGate(_request: LockRequest, gate: string): void {
    this.#track(this.#releaseMarker(gate).catch(() => false));
  }

  /** Releases a grant's marker (ownership-checked), then removes its hold record. */
  async #release(grant: FileGrant): Promise<boolean> {
    const owned = await this.#releaseMarker(grant.marker);
    // The hold is over either way; a record left behind is removed by a later forceRelease().
    await removeRecord(this.#context.fs, grant.record).catch(noop);
    return owned;
  }

  /** Ownership-checked release of a lock directory's or a member's marker. */
  #releaseMarker(marker: string): Promise<boolean> {
    const holding = this.#context.dirs.holding(marker);
    return holding ? this.#context.dirs.release(holding) : claimMarker(this.#context, marker);
  }

  /** The wait ended (granted, timed out, aborted, closed): give back a writer's pending gate. */
  #endWait(request: LockRequest): void {
    const state = this.#waits.get(request);
    if (!state) return;
    this.#waits.delete(request);
    const cleanup = state.busy.then(noop, noop).then(() => {
      const gate = state.pendingGate;
      state.pendingGate = undefined;
      if (gate !== undefined) this.#releaseGate(request, gate);
      return state.intent?.withdraw().catch(noop); // what is left goes stale
    });
    this.#track(cleanup);
  }

  #validUntil(touchedAt: number): number {
    const { leaseMs } = this.options;
    return touchedAt + leaseMs - Math.min(1000, leaseMs / 10);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(noop, noop);
    this.#work.add(settled);
    void settled.then(() => this.#work.delete(settled));
    return work;
  }

  #ensureReady(): Promise<void> {
    this.#ready ??= prepareDirectory(this.#context).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }
}
