#!/usr/bin/env node
// Mutation check. For every deliberately broken backend of the corpus (test/mutants/):
// 1. its witness (test/witnesses.test.ts) must fail on the mutant and pass on the control,
//    so the mutant really is broken;
// 2. the conformance suite must fail on it (test/memory.test.ts with LOCKKIT_MUTANT set;
//    file mutants run the cases named by their `cases` pattern).
// Prints one row per mutant (caught by, witness ok) and the catch rate. Exit code 1 if any
// mutant survives or any witness does not tell its mutant from the control.
// A mutant's run stops at its first failed case (it is caught); `--full` runs every case and
// lists all the cases that catch it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

const vitest = 'node_modules/vitest/vitest.mjs';
const dir = mkdtempSync(join(tmpdir(), 'lockkit-mutation-'));
// Mutant runs mostly wait (on timeouts of the cases they fail), so one more worker than cores.
const workers = Math.max(2, Math.min(3, availableParallelism() + 1));
const full = process.argv.includes('--full');
const started = performance.now();

const listed = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    "import { corpus } from './test/mutants/corpus.ts'; console.log(JSON.stringify(corpus.map(({ name, clause, why, backend, cases }) => ({ name, clause, why, backend, cases }))));",
  ],
  { encoding: 'utf8' },
);
if (listed.status !== 0) throw new Error(`cannot list the corpus:\n${listed.stderr}`);
const corpus = JSON.parse(listed.stdout);

function failedTests(report) {
  const result = JSON.parse(readFileSync(report, 'utf8'));
  return {
    total: result.numTotalTests,
    failed: result.testResults.flatMap((file) =>
      file.assertionResults.filter((test) => test.status === 'failed').map((test) => test.fullName),
    ),
    passed: result.testResults.flatMap((file) =>
      file.assertionResults.filter((test) => test.status === 'passed').map((test) => test.fullName),
    ),
  };
}

function runVitest(args, env, report) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [vitest, 'run', ...args, '--reporter=json', `--outputFile=${report}`],
      { env: { ...process.env, ...env }, stdio: 'ignore' },
    );
    child.on('exit', () => resolve());
  });
}

// The witnesses (one run for all) and the suite against each mutant, `workers` at a time.
const witnessReport = join(dir, 'witnesses.json');
const results = new Map();
const seconds = new Map();
// Memory mutants skip the three load cases (100 acquirers, 100 tasks, 10 × 25 trials): a
// mutant that slows handoffs makes them take minutes, and every mutant is caught elsewhere.
const memoryCases =
  '^(?!.*(100 concurrent acquirers|100 tasks with max 10|10 workers × 25 trials))';
const jobs = [
  () => runVitest(['test/witnesses.test.ts'], {}, witnessReport),
  ...corpus.map((mutant) => async () => {
    const report = join(dir, `${mutant.name}.json`);
    // A memory case takes well under a second on a correct backend: 2 s ends the hung ones.
    const filter = mutant.cases ? ['-t', mutant.cases] : ['-t', memoryCases, '--testTimeout=2000'];
    const begun = performance.now();
    const bail = full ? [] : ['--bail=1'];
    await runVitest(
      ['test/memory.test.ts', ...filter, ...bail],
      { LOCKKIT_MUTANT: mutant.name },
      report,
    );
    seconds.set(mutant.name, Math.round((performance.now() - begun) / 1000));
    let outcome;
    try {
      outcome = failedTests(report);
    } catch {
      outcome = { total: 0, failed: [], passed: [] };
    }
    results.set(mutant.name, outcome);
  }),
];
await Promise.all(
  Array.from({ length: workers }, async () => {
    for (let job = jobs.shift(); job; job = jobs.shift()) await job();
  }),
);
const witnesses = failedTests(witnessReport);
const witnessOk = (name) => witnesses.passed.some((title) => title.includes(` ${name}: `));
rmSync(dir, { recursive: true, force: true });

const short = (title) =>
  title.replace(/^lockkit conformance: \w+ with mutant "[^"]+" /, '').slice(0, 90);
let caught = 0;
let badWitnesses = 0;
console.log(
  `| mutant | clause | witness ok | s | caught by (${full ? 'failed cases' : 'first failed case; --full for all'}) |`,
);
console.log('| --- | --- | --- | --- | --- |');
for (const mutant of corpus) {
  const { total, failed } = results.get(mutant.name);
  const ok = witnessOk(mutant.name);
  if (failed.length > 0) caught += 1;
  if (!ok) badWitnesses += 1;
  const examples = [...new Set(failed.map(short))].slice(0, 3).join('<br>');
  console.log(
    `| ${mutant.name} | ${mutant.clause} | ${ok ? 'yes' : 'NO'} | ${seconds.get(mutant.name)} | ${failed.length ? `${failed.length} of ${total}: ${examples}` : 'SURVIVED'} |`,
  );
}
const rate = ((100 * caught) / corpus.length).toFixed(1);
console.log(
  `\ncatch rate: ${caught}/${corpus.length} (${rate} %); witnesses ok: ${corpus.length - badWitnesses}/${corpus.length}; ${Math.round((performance.now() - started) / 1000)} s`,
);
if (caught < corpus.length || badWitnesses > 0) {
  console.error('the mutation check failed: a mutant survived or a witness does not witness');
  process.exit(1);
}
