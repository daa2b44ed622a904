/**
 * `pnpm bench [--quick] [--backends a,b] [--no-write] [--scale]` — every backend, lockkit next to its
 * peers on the same throwaway servers, in one run. Prints the table and rewrites
 * docs/benchmarks.md and docs/benchmarks.svg (unless --no-write or a --backends subset).
 * `--scale`: the scale rows instead (scale-run.ts).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type BackendId, backendIds } from '../backends/backend-ids.js';
import { startLab } from '../backends/lab.js';
import { serverVersion } from '../backends/server-probes.js';
import { parseCommandLine } from '../support/command-line.js';
import { runMain } from '../support/run-main.js';
import { benchChart } from './bench-chart.js';
import { benchMarkdown } from './bench-report.js';
import type { ContenderResult } from './bench-result.js';
import { benchBackend } from './bench-run.js';
import { fullSettings, quickSettings } from './bench-settings.js';
import {
  benchHeader,
  benchNotes,
  benchNumericColumns,
  benchRows,
  markdownTable,
} from './bench-table.js';
import { loadAverages, machineAfterRun } from './machine-info.js';
import { telemetryOverhead } from './overhead-report.js';
import { runScale } from './scale-run.js';

const docs = new URL('../../../../docs/', import.meta.url);

async function main(): Promise<void> {
  const started = performance.now();
  const progress = (line: string): void => {
    process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`);
  };
  const options = parseCommandLine(process.argv.slice(2));
  if (options.scale) {
    await runScale(options, progress);
    return;
  }
  const settings = options.quick ? quickSettings : fullSettings;
  const loadBefore = loadAverages();
  progress(`starting servers for ${options.backends.join(', ')}`);
  const lab = await startLab(options.backends, 'bench');
  const results: ContenderResult[] = [];
  const servers: Partial<Record<BackendId, string>> = {};
  try {
    for (const backend of options.backends) {
      servers[backend] = await serverVersion(backend, lab.serversOf(backend)).catch(
        (error: unknown) => `unknown (${String(error)})`,
      );
      results.push(...(await benchBackend(backend, lab, settings, progress)));
    }
  } finally {
    await lab.stop();
  }
  const machine = machineAfterRun({ started, loadBefore, servers: servers, quick: options.quick });
  console.log(markdownTable(benchHeader, benchRows(results), benchNumericColumns));
  for (const note of benchNotes(results)) console.log(`- ${note}`);
  const overhead = telemetryOverhead(results);
  if (overhead.length > 0)
    console.log(`\nOpenTelemetry on vs off (uncontended):\n${overhead.join('\n')}`);
  console.log(
    `\n${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}; ` +
      `load ${machine.loadBefore.join('/')} → ${machine.loadAfter.join('/')}; ${machine.durationSeconds} s`,
  );
  const complete = options.backends.length === backendIds.length && !options.quick;
  if (options.write && complete) {
    const subtitle = `${machine.date.slice(0, 10)} · ${machine.cpus} × ${machine.cpuModel} · Node ${machine.node} · load average ${machine.loadBefore[0]} → ${machine.loadAfter[0]} · ${machine.command}`;
    writeFileSync(new URL('benchmarks.md', docs), benchMarkdown(results, machine));
    writeFileSync(
      new URL('benchmarks.svg', docs),
      benchChart(results, 'lockkit vs peers, same servers, one run', subtitle),
    );
    console.log(`\nwrote ${fileURLToPath(new URL('benchmarks.md', docs))} and benchmarks.svg`);
  } else if (options.write) {
    console.log('\n(--quick or a --backends subset: docs/benchmarks.md left alone)');
  }
}

runMain(main);
