import type { BackendId } from '../backends/backend-ids.js';
import type { HeldResult } from './measure-held.js';
import type { WorkersResult } from './measure-workers.js';

/** Handoff latency percentiles, ms. */
export interface HandoffResult {
  readonly p50: number;
  readonly p99: number;
  readonly samples: number;
}

/** Every figure for one contender; a measurement that was skipped or failed says why in `notes`. */
export interface ContenderResult {
  readonly backend: BackendId;
  readonly library: string;
  readonly lockkit: boolean;
  /** Uncontended acquire+release per second (NaN when it failed). */
  readonly uncontended: number;
  /** The process's CPU time per uncontended acquire+release, µs (absent in older results). */
  readonly uncontendedCpuMicros?: number;
  readonly handoff: HandoffResult | undefined;
  readonly workers: WorkersResult | undefined;
  readonly held: HeldResult | undefined;
  readonly notes: readonly string[];
}

/** The machine and software a bench ran on. */
export interface MachineInfo {
  readonly date: string;
  readonly command: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
  readonly loadBefore: readonly number[];
  readonly loadAfter: readonly number[];
  readonly servers: Readonly<Partial<Record<BackendId, string>>>;
  readonly durationSeconds: number;
  readonly quick: boolean;
}
