import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';
import type { MachineInfo } from './bench-result.js';

/** The parts of {@link MachineInfo} known before the run. */
export function describeMachine(): {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  os: string;
} {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${type()} ${release()}`,
  };
}

/** 1, 5 and 15 minute load averages, rounded. */
export function loadAverages(): number[] {
  return loadavg().map((value) => Math.round(value * 100) / 100);
}

/** The run's {@link MachineInfo}, once it is over: `started` is its performance.now() start. */
export function machineAfterRun(run: {
  readonly started: number;
  readonly loadBefore: number[];
  readonly servers: MachineInfo['servers'];
  readonly quick: boolean;
}): MachineInfo {
  const args = process.argv.slice(2).join(' ');
  return {
    ...describeMachine(),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: `pnpm bench${args ? ` ${args}` : ''}`,
    loadBefore: run.loadBefore,
    loadAfter: loadAverages(),
    servers: run.servers,
    durationSeconds: Math.round((performance.now() - run.started) / 1000),
    quick: run.quick,
  };
}
