import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';

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
