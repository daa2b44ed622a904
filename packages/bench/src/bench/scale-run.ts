/**
 * `pnpm bench --scale [--quick] [--backends a,b] [--no-write]`: the scale rows — many workers
 * in several processes on one lock (every waiting contender), and one lockkit provider
 * holding ever more locks (every backend but files) — on their own throwaway servers.
 * A full run (every backend, not --quick) rewrites docs/benchmarks-scale.md and .svg.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type BackendId, backendIds, isTopologyBackend } from '../backends/backend-ids.js';
import { startLab } from '../backends/lab.js';
import type { CommandLine } from '../support/command-line.js';
import { contendersFor } from './bench-run.js';
import { fullScaleSettings, quickScaleSettings } from './bench-settings.js';
import { markdownTable } from './bench-table.js';
import { loadAverages, machineAfterRun } from './machine-info.js';
import { type HeldPoint, measureHeldCurve } from './measure-held-curve.js';
import { measureProcesses, type ProcessesResult } from './measure-processes.js';
import { scaleChart } from './scale-chart.js';
import { heldRows, processRows, scaleMarkdown } from './scale-report.js';
import type { ScaleResult } from './scale-result.js';

const docs = new URL('../../../../docs/', import.meta.url);
/** Backends whose provider multiplexes many held locks over a few connections or sessions. */
const multiplexing: readonly BackendId[] = [
  'redis',
  'redlock',
  'postgres',
  'mysql',
  'zookeeper',
  'etcd',
];

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs the scale rows of `options.backends`; prints them and (full runs) writes the docs. */
export async function runScale(
  options: CommandLine,
  progress: (line: string) => void,
): Promise<void> {
  const settings = options.quick ? quickScaleSettings : fullScaleSettings;
  const started = performance.now();
  const loadBefore = loadAverages();
  const backends = options.backends.filter((backend) => !isTopologyBackend(backend));
  progress(`scale: starting servers for ${backends.join(', ')}`);
  const lab = await startLab(backends, 'scale');
  const results: ScaleResult[] = [];
  try {
    for (const backend of backends) {
      const spec = lab.specFor(backend, 'default');
      for (const contender of contendersFor(backend, lab)) {
        if (contender.uncontendedOnly === true || contender.variant === true) continue;
        const notes: string[] = [];
        let processes: ProcessesResult | undefined;
        let held: HeldPoint[] = [];
        const { processes: count, workersPerProcess: each } = settings;
        if (contender.waits === true) {
          progress(`${backend}: ${contender.library}: ${count} × ${each} workers`);
          try {
            processes = await measureProcesses(
              contender,
              spec,
              lab.directory,
              count,
              each,
              settings.workerMs,
            );
          } catch (error) {
            notes.push(`workers failed: ${message(error)}`);
          }
        }
        if (contender.lockkit && multiplexing.includes(backend)) {
          progress(`${backend}: ${contender.library}: held ${settings.heldCounts.join(' → ')}`);
          try {
            held = await measureHeldCurve(
              contender,
              settings.heldCounts,
              settings.probeCycles,
              (line) => progress(`${backend}: ${line}`),
            );
          } catch (error) {
            notes.push(`held locks failed: ${message(error)}`);
          }
        }
        if (processes || held.length > 0 || notes.length > 0) {
          results.push({
            backend,
            library: contender.library,
            lockkit: contender.lockkit,
            processes,
            held,
            notes,
          });
        }
      }
    }
  } finally {
    await lab.stop();
  }
  const machine = machineAfterRun({ started, loadBefore, servers: {}, quick: options.quick });
  const workersHeader = [
    'backend',
    'library',
    'processes × workers',
    '/s',
    'fewest / most',
    'of raw',
  ];
  console.log(markdownTable(workersHeader, processRows(results), new Set([3, 5])));
  const heldHeader = ['backend', 'library', 'held', 'locks/s', 'probe ms p50 / p99', 'heap B/lock'];
  console.log(`\n${markdownTable(heldHeader, heldRows(results), new Set([2, 3, 4, 5]))}`);
  for (const result of results) {
    for (const note of result.notes) console.log(`- ${result.backend}, ${result.library}: ${note}`);
  }
  const complete = backends.length === backendIds.length && !options.quick;
  if (options.write && complete) {
    const subtitle = `${machine.date.slice(0, 10)} · ${machine.cpus} × ${machine.cpuModel} · Node ${machine.node} · load average ${machine.loadBefore[0]} → ${machine.loadAfter[0]} · ${machine.command}`;
    writeFileSync(new URL('benchmarks-scale.md', docs), scaleMarkdown(results, machine));
    writeFileSync(
      new URL('benchmarks-scale.svg', docs),
      scaleChart(results, 'lockkit holding many locks on one provider', subtitle),
    );
    console.log(
      `\nwrote ${fileURLToPath(new URL('benchmarks-scale.md', docs))} and benchmarks-scale.svg`,
    );
  } else if (options.write) {
    console.log('\n(--quick or a --backends subset: docs/benchmarks-scale.* left alone)');
  }
}
