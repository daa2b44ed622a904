/**
 * Property-based: random sequences of acquire / tryAcquire / timeout / abort / release /
 * close (the conformance package's `fuzzApiSequences`), on the memory provider and on this
 * package's file backend. A failure prints fast-check's seed and the shrunk sequence;
 * FUZZ_SEED reruns another seed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzApiSequences } from '@lockkit/conformance';
import { createMemoryLockProvider, MemoryLockStore } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { createFileLockProvider } from '../src/index.js';
import { TIME_SCALE } from './support.js';

describe('random API sequences against a model', () => {
  it('memory provider', async () => {
    const ran = await fuzzApiSequences({
      createProvider: () => createMemoryLockProvider({ store: new MemoryLockStore() }),
      numRuns: 150,
      maxCommands: 25,
      timeScale: TIME_SCALE,
    });
    expect(ran).toBeGreaterThan(750);
  });

  it('file provider', async () => {
    const directories = new Map<object, string>();
    const ran = await fuzzApiSequences({
      createProvider: () => {
        const directory = mkdtempSync(join(tmpdir(), 'lockkit-file-fuzz-'));
        const provider = createFileLockProvider({ directory });
        directories.set(provider, directory);
        return provider;
      },
      cleanup: (provider) => rmSync(directories.get(provider)!, { recursive: true, force: true }),
      numRuns: 60,
      maxCommands: 20,
      timeScale: TIME_SCALE,
    });
    expect(ran).toBeGreaterThan(300);
  });
});
