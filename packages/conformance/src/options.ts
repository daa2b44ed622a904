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
  /** Enables the outage cases (docs/contract.md, "When the server cannot be reached"). */
  readonly outage?: OutageFaults;
}

/** How the outage cases reach a server that is not there. */
export interface OutageFaults {
  /**
   * A provider set up like `createProvider`'s, but for a server that cannot be reached (an
   * address where nothing listens, so connections are refused; for files, a directory that
   * cannot be used). The suite closes it.
   */
  readonly createUnreachableProvider: () => ILockProvider | Promise<ILockProvider>;
  /**
   * What every `BackendUnavailableError` from that provider must name in its message (the
   * host:port, socket path or directory it tried). Absent → the message is not checked.
   */
  readonly address?: string;
  /**
   * Optional: cut `provider` (from `createProvider`) off from its server while both keep
   * running (pause the server, drop the connection's traffic, make the directory unusable),
   * until the returned function restores it. Enables the held-lock outage case.
   */
  readonly interrupt?: (provider: ILockProvider) => Promise<() => Promise<void>>;
}

/** What the suite asks of {@link ConformanceOptions.createProvider}. */
export interface ProviderOptions {
  /**
   * The provider's namespace (the provider option every backend takes). Absent → the
   * default namespace. The namespace cases create providers in two namespaces and expect
   * them never to exclude each other, so a factory must pass it on.
   */
  readonly namespace?: string;
  /**
   * The provider's owner label (the provider option every backend takes since
   * `inspect()`); the inspection cases check that holds report it. Pass it on.
   */
  readonly owner?: string;
}

/** Options of {@link describeLockProvider}. */
export interface ConformanceOptions {
  /** Shown in the describe() title. */
  readonly name: string;
  /**
   * A fresh provider on the shared server each call; the suite closes it. Pass
   * `options.namespace` on to the provider.
   */
  readonly createProvider: (options?: ProviderOptions) => ILockProvider | Promise<ILockProvider>;
  readonly faults?: ConformanceFaults;
  /** Enables the cross-process cases (with `capabilities.crossProcess`). */
  readonly childProvider?: ChildProviderSpec;
  /**
   * Lease backends (`capabilities.leases`): the lease length in ms of the providers that
   * `createProvider` returns; keep it short (1–2 s). Enables the case that holds a lock over
   * more than three lease lengths. Absent → that case is skipped, saying so.
   */
  readonly leaseMs?: number;
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
