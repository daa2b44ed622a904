/** Child-process provider of a file mutant's world (or its control): see worlds.ts. */
import { mutantNamed } from './corpus.js';
import type { MutantProvider } from './types.js';
import { worldOf } from './worlds.js';

export function createProvider(): MutantProvider {
  const directory = process.env['LOCKKIT_MUTANT_DIR'];
  const name = process.env['LOCKKIT_MUTANT'];
  if (!directory || !name) throw new Error('LOCKKIT_MUTANT and LOCKKIT_MUTANT_DIR must be set');
  return worldOf(mutantNamed(name), process.env['LOCKKIT_MUTANT_CONTROL'] === '1', directory)();
}
