/**
 * `pnpm chaos [--quick] [--backends a,b] [--scenarios mutex,rwlock,semaphore,election]
 * [--faults standard|network|clock] [--seed N] [--cycles N] [--dump DIR] [--verbose]` — for each backend, worker processes
 * hammer a few mutexes (then RW locks, semaphores, and campaign in a few elections) while
 * faults are injected; a fenced checker records what they
 * did. Prints a summary per backend; exits 1 on any violation.
 */
import { loadavg } from 'node:os';
import { backendLabels } from '../backends/backend-ids.js';
import { startLab } from '../backends/lab.js';
import { parseCommandLine } from '../support/command-line.js';
import { runChaosBackend } from './chaos-backend-run.js';
import type { BackendChaosResult } from './chaos-result.js';
import { chaosReport } from './chaos-summary.js';

async function main(): Promise<number> {
  const options = parseCommandLine(process.argv.slice(2));
  const started = performance.now();
  const log = (line: string): void => {
    process.stderr.write(`[chaos ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`);
  };
  const cycles = options.cycles ?? 5;
  log(
    `${options.quick ? 'quick' : `${cycles} cycles`}, seed ${options.seed}: starting servers for ${options.backends.join(', ')}`,
  );
  const lab = await startLab(options.backends, 'chaos', {
    serverClocks: options.faults === 'clock',
    zookeeperEnsemble: options.faults === 'network',
  });
  const results: BackendChaosResult[] = [];
  const failures: string[] = [];
  try {
    for (const backend of options.backends) {
      for (const scenario of options.scenarios) {
        try {
          results.push(
            await runChaosBackend(backend, lab, {
              scenario,
              faults: options.faults,
              quick: options.quick,
              seed: options.seed,
              cycles,
              verbose: options.verbose,
              dump: options.dump,
              log,
            }),
          );
        } catch (error) {
          failures.push(
            `${backendLabels[backend]} (${scenario}): the run itself failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          );
          log(failures.at(-1) ?? '');
        }
      }
    }
  } finally {
    await lab.stop();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');
  console.log(chaosReport(results));
  for (const failure of failures) console.log(`\n**RUN FAILED** ${failure}`);
  const violations = results.reduce((sum, result) => sum + result.violations.length, 0);
  console.log(
    `\n${violations === 0 && failures.length === 0 ? 'PASS' : 'FAIL'}: ${violations} violation(s)` +
      `${failures.length > 0 ? `, ${failures.length} backend run(s) failed` : ''}; ` +
      `${seconds} s; load average ${load}; pnpm chaos ${process.argv.slice(2).join(' ')}`,
  );
  return violations === 0 && failures.length === 0 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // The exit hooks (workers here, servers in the test kit) run on process.exit.
  process.once(signal, () => process.exit(130));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
