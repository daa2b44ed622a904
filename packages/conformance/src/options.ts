import type { ILockProvider, LockHandle } from '@lockkit/core';

/** How the cross-process cases start a provider in a child process. */
export interface ChildProviderSpec {
  /** URL or absolute path of an ES module (a `.ts` module runs under `tsx`). */
  readonly module: string;
  /** Export that returns a provider (or a promise of one). @defaultValue 'createProvider' */
  readonly exportName?: string;
  /** Extra environment for the child (server URLs, directories). */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags for the child. @defaultValue `['--import', 'tsx']` when a `.ts` file is involved */
  readonly execArgv?: readonly string[];
}

/** Optional fault hooks; a case whose hook is absent is skipped and says why in its title. */
export interface ConformanceFaults {
  /**
   * Break the backend's hold on `handle` the way the real world would (delete the key,
   * terminate the session, delete the node, remove the lock file) — without telling the
   * handle. The suite then expects `handle.signal` to abort within
   * `capabilities.lostDetectionMs` and the lock to become free for others.
   */
  readonly loseLock?: (handle: LockHandle, provider: ILockProvider) => Promise<void> | void;
}

/** Options of {@link describeLockProvider}. */
export interface ConformanceOptions {
  /** Shown in the describe() title. */
  readonly name: string;
  /** A fresh provider on the shared server each call; the suite closes it. */
  readonly createProvider: () => ILockProvider | Promise<ILockProvider>;
  readonly faults?: ConformanceFaults;
  /** Enables the cross-process cases (with `capabilities.crossProcess`). */
  readonly childProvider?: ChildProviderSpec;
  /** Multiplies every timing bound, for slow backends or machines. @defaultValue 1 */
  readonly timeScale?: number;
  /**
   * Pins the backend's name→key mapping: `map(name)` must return `key` for each pair.
   * Absent → that case is skipped (the backend pins it in its own tests).
   */
  readonly goldenKeys?: {
    readonly map: (name: string) => string | bigint;
    readonly expected: readonly (readonly [name: string, key: string])[];
  };
}
