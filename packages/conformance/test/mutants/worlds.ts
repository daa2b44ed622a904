/** Builds providers of a mutant's world (or of its unmutated control) on memory or files. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LockHandle } from '@lockkit/core';
import {
  grantBehind,
  type LockBackend,
  LockProvider,
  MemoryBackend,
  type MemoryGrant,
} from '@lockkit/core/backend';
import { type FileGrant, FileLockBackend } from '../../../file/src/file-lock-backend.js';
import { resolveFileOptions } from '../../../file/src/file-lock-options.js';
import type { ProviderOptions } from '../../src/index.js';
import { FlawedStore } from './flawed-store.js';
import { forward, type Mutant, type MutantProvider } from './types.js';

/** Lease of the file worlds (short, so lease clauses show within seconds). */
export const fileLeaseMs = 2000;

/** A provider factory for `mutant`'s world, or the control world when `control` is true. */
export function worldOf(
  mutant: Mutant,
  control: boolean,
  directory: string,
): (options?: ProviderOptions) => MutantProvider {
  const wrap = (inner: LockBackend<never>): LockBackend<never> => {
    if (control) return inner;
    const wrapped = (mutant.wrap ? mutant.wrap(inner) : inner) as LockBackend<never>;
    if (!mutant.capabilities) return wrapped;
    return {
      ...forward(wrapped),
      capabilities: { ...wrapped.capabilities, ...mutant.capabilities },
    } as LockBackend<never>;
  };
  if (mutant.backend === 'memory') {
    const store = new FlawedStore(control ? [] : mutant.flaws);
    return (options) => {
      const inner = new MemoryBackend(store);
      const provider = new LockProvider(wrap(inner as never), options);
      return Object.assign(provider, {
        loseLock: async (handle: LockHandle) => inner.evict(grantBehind<MemoryGrant>(handle).grant),
      });
    };
  }
  return (options) => {
    const resolved = resolveFileOptions({ ...options, directory, leaseMs: fileLeaseMs });
    const namespace = control || !mutant.dropsNamespace ? options : undefined;
    const provider = new LockProvider(wrap(new FileLockBackend(resolved) as never), namespace);
    return Object.assign(provider, {
      loseLock: async (handle: LockHandle) => {
        const { grant } = grantBehind<FileGrant>(handle);
        rmSync(grant.lockDir ?? grant.marker, { recursive: true, force: true });
      },
    });
  };
}

/** A fresh lock directory. */
export function temporaryDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'lockkit-mutant-'));
}

/** A lock directory that cannot be used (it sits under a regular file), and its cleanup. */
export function unusableDirectory(): { directory: string; remove: () => void } {
  const parent = temporaryDirectory();
  writeFileSync(join(parent, 'file'), '');
  return {
    directory: join(parent, 'file', 'locks'),
    remove: () => rmSync(parent, { recursive: true, force: true }),
  };
}
