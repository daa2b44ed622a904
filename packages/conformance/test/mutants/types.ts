import type { ILockProvider, LockHandle } from '@lockkit/core';
import type { LockBackend } from '@lockkit/core/backend';
import type { ProviderOptions } from '../../src/index.js';
import type { StoreFlaw } from './flawed-store.js';

/** A provider of the mutation corpus, with the suite's `loseLock` fault hook. */
export type MutantProvider = ILockProvider & { loseLock(handle: LockHandle): Promise<void> };

/** What a witness gets: providers of one world (mutant or control), closed afterwards. */
export interface WitnessKit {
  provider(options?: ProviderOptions): Promise<MutantProvider>;
  /** A provider of the same world whose lock directory cannot be used (file worlds only). */
  unreachable(): Promise<MutantProvider>;
  /** A name no other witness uses. */
  name(label: string): string;
  /** Environment for a child process of the same world (see file-child.ts). */
  readonly childEnv: Readonly<Record<string, string>>;
}

/** One deliberately broken backend: a single plausible bug against one contract clause. */
export interface Mutant {
  readonly name: string;
  /** The clause it breaks: a number of docs/contract.md's guarantees, or "backend: …". */
  readonly clause: string;
  /** One line: why a backend author could write this bug. */
  readonly why: string;
  readonly backend: 'memory' | 'file';
  /** Server-side flaws (memory backend only). */
  readonly flaws?: readonly StoreFlaw[];
  // biome-ignore lint/suspicious/noExplicitAny: wraps the memory or the file backend
  readonly wrap?: (inner: LockBackend<any>) => LockBackend<any>;
  /** Overrides of the backend's declared capabilities (a lying declaration). */
  readonly capabilities?: Partial<ILockProvider['capabilities']>;
  /** The provider accepts the namespace option and never uses it. */
  readonly dropsNamespace?: boolean;
  /** A small deterministic check that throws on the mutant and passes on the control. */
  readonly witness: (kit: WitnessKit) => Promise<void>;
  /** Vitest name pattern (-t) of the cases worth running against it (slow backends). */
  readonly cases?: string;
}

/** Throws `message` unless `condition`. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`witness: ${message}`);
}

/** A backend that forwards everything to `inner` (mutants override one method). */
// biome-ignore lint/suspicious/noExplicitAny: any grant type
export function forward(inner: LockBackend<any>): LockBackend<any> {
  return {
    backend: inner.backend,
    capabilities: inner.capabilities,
    pollIntervalMs: inner.pollIntervalMs,
    tryAcquire: (request, wait) => inner.tryAcquire(request, wait),
    ...(inner.watch && { watch: (request) => inner.watch!(request) }),
    release: (request, grant) => inner.release(request, grant),
    ...(inner.extend && {
      extend: (request, grant, durationMs) => inner.extend!(request, grant, durationMs),
    }),
    ...(inner.monitor && {
      monitor: (request, grant, lose) => inner.monitor!(request, grant, lose),
    }),
    close: () => inner.close(),
  };
}
