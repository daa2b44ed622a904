/**
 * `pnpm --filter @lockkit/bench telemetry-chart [--no-write]` — what a contended lock looks
 * like in @lockkit/opentelemetry's metrics: workers on one Redis lock (1, 2, 4, 8, 4, 1 of
 * them), the real SDK collected every second. Prints the samples and writes
 * docs/telemetry-contended.svg (unless --no-write).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '@lockkit/testkit';
import { serverVersion } from '../backends/server-probes.js';
import { markdownTable } from '../bench/bench-table.js';
import { describeMachine, loadAverages } from '../bench/machine-info.js';
import { runMain } from '../support/run-main.js';
import { contendedChart } from './contended-chart.js';
import { type Phase, runContended, type Workload } from './contended-run.js';

const phases: readonly Phase[] = [1, 2, 4, 8, 4, 1].map((workers) => ({ workers, seconds: 6 }));
const workload: Workload = { holdMs: 5, thinkMs: 5, timeoutMs: 40 };
const target = new URL('../../../../docs/telemetry-contended.svg', import.meta.url);

async function main(): Promise<void> {
  const write = !process.argv.includes('--no-write');
  const started = performance.now();
  const progress = (line: string): void => {
    process.stderr.write(
      `[telemetry-chart ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`,
    );
  };
  const loadBefore = loadAverages();
  const server = await startRedisServer();
  let version: string;
  let samples: Awaited<ReturnType<typeof runContended>>;
  try {
    version = await serverVersion('redis', [server]);
    samples = await runContended(server.url, phases, workload, progress);
  } finally {
    await server.stop();
  }
  const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '—');
  console.log(
    markdownTable(
      ['s', 'workers', 'wait p50 ms', 'p90 ms', 'p99 ms', 'granted/s', 'timeout/s'],
      samples.map((sample) => [
        String(sample.second),
        String(sample.workers),
        ms(sample.p50),
        ms(sample.p90),
        ms(sample.p99),
        String(sample.granted),
        String(sample.timedOut),
      ]),
      new Set([0, 1, 2, 3, 4, 5, 6]),
    ),
  );
  const machine = describeMachine();
  const subtitle =
    `${new Date().toISOString().slice(0, 10)} · ${version} · ${machine.cpus} × ${machine.cpuModel} · Node ${machine.node} · ` +
    `load ${loadBefore[0]} → ${loadAverages()[0]} · hold ${workload.holdMs} ms, think ${workload.thinkMs} ms, timeout ${workload.timeoutMs} ms`;
  if (write) {
    writeFileSync(
      target,
      contendedChart(samples, 'One lock, more and more workers: what the metrics show', subtitle),
    );
    console.log(`\nwrote ${fileURLToPath(target)}`);
  }
}

runMain(main);
