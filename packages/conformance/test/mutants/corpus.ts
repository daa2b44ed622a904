/**
 * The mutation corpus: deliberately broken backends, one plausible bug each. `pnpm mutation`
 * runs the conformance suite against every mutant (it must fail) and each mutant's witness
 * against the mutant (it must fail) and the unmutated control (it must pass).
 */
import { fileMutants } from './file-mutants.js';
import { memoryBackendMutants } from './memory-backend-mutants.js';
import { memoryPolicyMutants } from './memory-policy-mutants.js';
import { memoryServerMutants } from './memory-server-mutants.js';
import { outageMutants } from './outage-mutants.js';
import type { Mutant } from './types.js';

export const corpus: readonly Mutant[] = [
  ...memoryBackendMutants,
  ...memoryPolicyMutants,
  ...memoryServerMutants,
  ...fileMutants,
  ...outageMutants,
];

export function mutantNamed(name: string): Mutant {
  const mutant = corpus.find((candidate) => candidate.name === name);
  if (!mutant) throw new Error(`unknown mutant ${name}`);
  return mutant;
}

/** The mutant named by LOCKKIT_MUTANT, if any. */
export function selectedMutant(): Mutant | undefined {
  const name = process.env['LOCKKIT_MUTANT'];
  return name ? mutantNamed(name) : undefined;
}
