/**
 * `pnpm bench --scale [--quick] [--backends a,b] [--no-write]`: the scale rows — many workers
 * in several processes on one lock (every waiting contender, lockkit's switches too), and one
 * lockkit provider holding ever more locks (every backend but files; on the SQL ones also the
 * raw client and lockkit with more shared sessions) — on their own throwaway servers.
 * A full run (every backend, not --quick) rewrites docs/benchmarks-scale.md and .svg.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type BackendId, backendIds, isTopologyBackend } from '../backends/backend-ids.js';
import { startLab } from '../backends/lab.js';
import type { ProviderSpec, ProviderVariant } from '../backends/provider-spec.js';
import type { CommandLine } from '../support/command-line.js';
import { contendersFor } from './bench-run.js';
import { fullScaleSettings, quickScaleSettings, type ScaleSettings } from './bench-settings.js';
import { markdownTable } from './bench-table.js';
import type { Contender } from './contender.js';
import { loadAverages, machineAfterRun } from './machine-info.js';
import { type HeldPoint, measureHeldCurve } from './measure-held-curve.js';
import { measureProcesses, type ProcessesResult } from './measure-processes.js';
import { lockkitContender } from './peers/lockkit-contender.js';
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

/**
 * Backends whose server work per statement grows with the locks one session holds: their
 * held-locks curve also has the raw client (one session, up to `rawHeldLimit`) and lockkit
 * with more shared sessions, what a user who holds many locks switches to.
 */
const sessionBound: Partial<Record<BackendId, readonly ProviderVariant[]>> = {
  postgres: [{ sharedConnections: 32 }],
  mysql: [{ sharedConnections: 32 }],
};

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What the scale run measures of one contender. */
export interface ScaleTask {
  readonly contender: Contender;
  /** Many workers in several processes on one lock. */
  readonly workers: boolean;
  /** The counts of its held-locks curve (none: no curve). */
  readonly heldCounts: readonly number[];
}

/**
 * The scale run's tasks on one backend: every waiting contender's many-workers row (lockkit's
 * switches included); the held-locks curve of lockkit's defaults (multiplexing backends), and
 * on a session-bound one (given `sessionVariants`, lockkit with more shared sessions: curve
 * only) also of the raw client, up to `rawHeldLimit`.
 */
export function scaleTasks(
  contenders: readonly Contender[],
  sessionVariants: readonly Contender[],
  settings: ScaleSettings,
): ScaleTask[] {
  const curve = (contender: Contender): readonly number[] => {
    if (!multiplexing.includes(contender.backend)) return [];
    if (contender.lockkit) return contender.variant === true ? [] : settings.heldCounts;
    const raw =
      contender.library.startsWith('raw') &&
      contender.holdsMany === true &&
      sessionVariants.length > 0;
    return raw ? settings.heldCounts.filter((count) => count <= settings.rawHeldLimit) : [];
  };
  return [
    ...contenders
      .filter((contender) => contender.uncontendedOnly !== true)
      .map((contender) => ({
        contender,
        workers: contender.waits === true,
        heldCounts: curve(contender),
      })),
    ...sessionVariants.map((contender) => ({
      contender,
      workers: false,
      heldCounts: settings.heldCounts,
    })),
  ].filter((task) => task.workers || task.heldCounts.length > 0);
}

/** The scale rows of one task: many workers and held locks. */
async function measureTask(
  { contender, workers, heldCounts: counts }: ScaleTask,
  spec: ProviderSpec,
  directory: string,
  settings: ScaleSettings,
  progress: (line: string) => void,
): Promise<ScaleResult> {
  const { backend, library } = contender;
  const notes: string[] = [];
  let processes: ProcessesResult | undefined;
  let held: HeldPoint[] = [];
  const { processes: count, workersPerProcess: each } = settings;
  if (workers) {
    progress(`${backend}: ${library}: ${count} × ${each} workers`);
    try {
      processes = await measureProcesses(
        contender,
        spec,
        directory,
        count,
        each,
        settings.workerMs,
      );
    } catch (error) {
      notes.push(`workers failed: ${message(error)}`);
    }
  }
  if (counts.length > 0) {
    progress(`${backend}: ${library}: held ${counts.join(' → ')}`);
    try {
      held = await measureHeldCurve(contender, counts, settings.probeCycles, (line) =>
        progress(`${backend}: ${library}: ${line}`),
      );
    } catch (error) {
      notes.push(`held locks failed: ${message(error)}`);
    }
  }
  return { backend, library, lockkit: contender.lockkit, processes, held, notes };
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
      const tasks = scaleTasks(
        contendersFor(backend, lab),
        (sessionBound[backend] ?? []).map((variant) => lockkitContender(spec, variant)),
        settings,
      );
      for (const task of tasks) {
        results.push(await measureTask(task, spec, lab.directory, settings, progress));
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
