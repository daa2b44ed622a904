/**
 * `pnpm --filter @lockkit/bench mysql-costs [--quick]` — where the time of a contended MariaDB
 * hand-off goes: the cost ladder of mysql-ladder.ts (the raw server-side wait, then lockkit's
 * fencing draw after it, then its inspection record, then the same three as one query) beside
 * lockkit with and without the record, on a throwaway MariaDB with its durable defaults. Per
 * run, every contender in turn: a hand-off sample (p50 from the holder's release call to the
 * waiter's grant) and 8 workers on one lock (critical sections per second; with them, the
 * statements the server ran and the CPU time this process spent per critical section, and
 * overlapping grants, which must be 0). 3 runs (1 with --quick) give the run-to-run spread.
 * Prints only.
 */
import { startLab } from '../backends/lab.js';
import { parseCommandLine } from '../support/command-line.js';
import { runMain } from '../support/run-main.js';
import { median } from '../support/statistics.js';
import { integer, milliseconds, percent, spread } from './bench-table.js';
import { measureHandoff } from './measure-handoff.js';
import { measureWorkers } from './measure-workers.js';
import { mysqlLadder } from './mysql-ladder.js';
import { lockkitContender } from './peers/lockkit-contender.js';
import { mysqlCounters, mysqlReadCost, perSection } from './server-counters.js';

async function main(): Promise<void> {
  const options = parseCommandLine(process.argv.slice(2));
  const [runs, rounds, workersMs] = options.quick ? [1, 40, 1000] : [3, 150, 3000];
  const lab = await startLab(['mysql'], 'counts');
  try {
    const spec = lab.specFor('mysql', 'default');
    const url = spec.urls[0] as string;
    const contenders = [
      ...mysqlLadder(url),
      lockkitContender(spec, { recordHolds: false }),
      lockkitContender(spec),
    ];
    const counters = await mysqlCounters(url);
    const handoffs: number[][] = contenders.map(() => []);
    /** Per run: statements and client CPU µs per critical section, overlapping grants. */
    const statements: number[][] = contenders.map(() => []);
    const clientCpu: number[][] = contenders.map(() => []);
    const overlaps = contenders.map(() => 0);
    const sections: number[][] = contenders.map(() => []);
    /** Per run, each contender's critical sections over the raw wait's (the first rung). */
    const ratios: number[][] = contenders.map(() => []);
    for (let run = 0; run < runs; run++) {
      console.error(`[mysql-costs] run ${run + 1} of ${runs}`);
      for (const [index, contender] of contenders.entries()) {
        handoffs[index]?.push(median(await measureHandoff(contender, rounds, 20_000)));
        const [before, cpu] = [await counters.read(), process.cpuUsage()];
        const workers = await measureWorkers(contender, workersMs);
        const { user, system } = process.cpuUsage(cpu);
        const count = workers.perWorker.reduce((sum, done) => sum + done, 0);
        const grew = perSection(before, await counters.read(), count, mysqlReadCost);
        statements[index]?.push(grew.find(([key]) => key === 'Questions')?.[1] ?? 0);
        clientCpu[index]?.push((user + system) / count);
        overlaps[index] = (overlaps[index] ?? 0) + workers.overlaps;
        sections[index]?.push(workers.perSecond);
      }
      const base = sections[0]?.[run] ?? Number.NaN;
      for (const [index, rates] of sections.entries())
        ratios[index]?.push((rates[run] ?? 0) / base);
    }
    console.log(`\nmysql (MariaDB, durable), one lock, ${runs} interleaved run(s)`);
    await counters.close();
    console.log(
      '| client | hand-off p50 ms | 8 workers, sections/s | of the raw wait | statements per section | client CPU µs per section | overlaps |',
    );
    console.log('|---|--:|--:|--:|--:|--:|--:|');
    contenders.forEach((contender, index) => {
      const handoff = handoffs[index] ?? [];
      const rate = sections[index] ?? [];
      const ratio = ratios[index] ?? [];
      console.log(
        `| ${contender.library} | ${milliseconds(median(handoff))}${spread(handoff, milliseconds)} | ${integer(median(rate))} | ${percent(median(ratio))}${spread(ratio, percent)} | ${median(statements[index] ?? []).toFixed(2)} | ${integer(median(clientCpu[index] ?? []))} | ${overlaps[index]} |`,
      );
    });
  } finally {
    await lab.stop();
  }
}

runMain(main);
