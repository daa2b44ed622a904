import type { BackendId } from '../backends/backend-ids.js';
import type { HeldPoint } from './measure-held-curve.js';
import type { ProcessesResult } from './measure-processes.js';

/** The scale rows of one contender on one backend. */
export interface ScaleResult {
  readonly backend: BackendId;
  readonly library: string;
  readonly lockkit: boolean;
  /** Many workers in several processes on one lock (undefined: not measured or failed). */
  readonly processes: ProcessesResult | undefined;
  /** The held-locks curve (empty: not measured or failed). */
  readonly held: readonly HeldPoint[];
  readonly notes: readonly string[];
}
