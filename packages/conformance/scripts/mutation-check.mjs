#!/usr/bin/env node
// Runs the conformance suite against each deliberately broken in-memory backend
// (test/mutants.ts) and checks that every mutant is caught by at least one failing case.
// Prints which cases caught which bug. Exit code 1 if any mutant survives.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mutants = ['double-grant', 'silent-loss', 'stale-token', 'blind-release', 'polling-waiter'];
const dir = mkdtempSync(join(tmpdir(), 'lockkit-mutation-'));
let survivors = 0;
console.log('| mutant | failed cases | examples |');
console.log('| --- | --- | --- |');
for (const mutant of mutants) {
  const report = join(dir, `${mutant}.json`);
  spawnSync(
    process.execPath,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      'test/memory.test.ts',
      '--reporter=json',
      `--outputFile=${report}`,
    ],
    { env: { ...process.env, LOCKKIT_MUTANT: mutant }, stdio: 'ignore' },
  );
  const result = JSON.parse(readFileSync(report, 'utf8'));
  const failed = result.testResults.flatMap((file) =>
    file.assertionResults.filter((test) => test.status === 'failed').map((test) => test.fullName),
  );
  if (failed.length === 0) survivors += 1;
  const short = (title) => title.replace(/^lockkit conformance: memory with mutant "[^"]+" /, '');
  const examples = [...new Set(failed.map(short))].slice(0, 4).join('<br>');
  console.log(
    `| ${mutant} | ${failed.length} of ${result.numTotalTests} | ${examples || 'SURVIVED'} |`,
  );
}
rmSync(dir, { recursive: true, force: true });
if (survivors > 0) {
  console.error(
    `${survivors} mutant(s) survived: the suite cannot tell them from a correct backend`,
  );
  process.exit(1);
}
console.log('every mutant was caught');
