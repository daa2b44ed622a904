/**
 * Every mutant's witness fails on the mutant and passes on its unmutated control: a mutant
 * the suite does not catch is then a known gap, never a mutant that is not broken at all.
 */
import { rmSync } from 'node:fs';
import type { ILockProvider } from '@lockkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { corpus } from './mutants/corpus.js';
import type { Mutant, WitnessKit } from './mutants/types.js';
import { temporaryDirectory, unusableDirectory, worldOf } from './mutants/worlds.js';

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

let counter = 0;
async function runWitness(mutant: Mutant, control: boolean): Promise<void> {
  const directory = temporaryDirectory();
  directories.push(directory);
  const make = worldOf(mutant, control, directory);
  const providers: ILockProvider[] = [];
  const cleanups: (() => void)[] = [];
  const kit: WitnessKit = {
    provider: async (options) => {
      const provider = make(options);
      providers.push(provider);
      return provider;
    },
    unreachable: async () => {
      const blocked = unusableDirectory();
      cleanups.push(blocked.remove);
      const provider = worldOf(mutant, control, blocked.directory)();
      providers.push(provider);
      return provider;
    },
    name: (label) => `witness:${process.pid}:${++counter}:${label}`,
    childEnv: {
      LOCKKIT_MUTANT: mutant.name,
      LOCKKIT_MUTANT_DIR: directory,
      LOCKKIT_MUTANT_CONTROL: control ? '1' : '',
    },
  };
  try {
    await mutant.witness(kit);
  } finally {
    await Promise.all(providers.map((provider) => provider.close()));
    for (const cleanup of cleanups) cleanup();
  }
}

describe.concurrent('mutant witnesses', () => {
  for (const mutant of corpus) {
    it(`${mutant.name}: the witness passes on the control and fails on the mutant`, async () => {
      await runWitness(mutant, true);
      const error = await runWitness(mutant, false).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(error)).toMatch(/^Error: witness: /);
    }, 30_000);
  }
});
