import {
  type BackendId,
  backendIds,
  isBackendId,
  selectableBackendIds,
} from '../backends/backend-ids.js';
import type { ChaosScenario } from '../chaos/chaos-messages.js';

/** Options shared by `pnpm bench` and `pnpm chaos`. */
export interface CommandLine {
  /** `--quick`: the smoke version. */
  readonly quick: boolean;
  /** `--backends redis,postgres`: a subset, in the standard order. Default: all. */
  readonly backends: readonly BackendId[];
  /** `--seed N` (chaos): the fault plan's seed. */
  readonly seed: number;
  /** `--cycles N` (chaos): rounds of the fault plan. */
  readonly cycles: number | undefined;
  /**
   * `--scale` (bench): instead of the standard rows, the scale rows: 64 workers in 8
   * processes on one lock, and one provider holding 1 000 → 10 000 → 100 000 locks.
   */
  readonly scale: boolean;
  /** `--no-write` (bench): print only, leave docs/ alone. */
  readonly write: boolean;
  /** `--verbose`: progress and worker output on stderr. */
  readonly verbose: boolean;
  /** `--dump DIR` (chaos): write every backend's ledger and faults as JSON there. */
  readonly dump: string | undefined;
  /**
   * `--scenarios mutex,rwlock,semaphore,election` (chaos): which scenarios to run. Default:
   * all; with `--quick`, the mutex only (the CI budget: conformance covers elections on every
   * backend), the others only when named.
   */
  readonly scenarios: readonly ChaosScenario[];
  /**
   * `--faults network` (chaos): instead of the process and server faults, partitions, packet
   * loss and delay, with every worker in a network namespace of its own (needs root, iproute2
   * and nftables; skipped with the reason printed where they are missing). `--faults clock`:
   * every worker under libfaketime, and wall-clock jumps of a holder and of a contender.
   */
  readonly faults: FaultSet;
}

/** The fault sets of `pnpm chaos --faults`. */
export type FaultSet = 'standard' | 'network' | 'clock';
const faultSets: readonly FaultSet[] = ['standard', 'network', 'clock'];

const scenarioNames: readonly ChaosScenario[] = ['mutex', 'rwlock', 'semaphore', 'election'];
const quickScenarios: readonly ChaosScenario[] = ['mutex'];

/** Parses `argv` (without node and the script); throws a readable Error on a bad argument. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  let quick = false;
  let backends: readonly BackendId[] = backendIds;
  let seed = 1;
  let cycles: number | undefined;
  let write = true;
  let scale = false;
  let verbose = false;
  let dump: string | undefined;
  let scenarios: readonly ChaosScenario[] | undefined;
  let faults: FaultSet = 'standard';
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? '';
    const [flag, inline] = argument.includes('=') ? argument.split('=', 2) : [argument, undefined];
    const value = (): string => {
      const next = inline ?? argv[++index];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--':
        break;
      case '--quick':
        quick = true;
        break;
      case '--scale':
        scale = true;
        break;
      case '--no-write':
        write = false;
        break;
      case '--verbose':
        verbose = true;
        break;
      case '--backends': {
        const wanted = value()
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        for (const name of wanted) {
          if (!isBackendId(name)) {
            throw new Error(
              `unknown backend "${name}" (known: ${selectableBackendIds.join(', ')})`,
            );
          }
        }
        backends = selectableBackendIds.filter((id) => wanted.includes(id));
        break;
      }
      case '--dump':
        dump = value();
        break;
      case '--scenarios': {
        const wanted = value()
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        for (const name of wanted) {
          if (!(scenarioNames as readonly string[]).includes(name)) {
            throw new Error(`unknown scenario "${name}" (known: ${scenarioNames.join(', ')})`);
          }
        }
        scenarios = scenarioNames.filter((name) => wanted.includes(name));
        break;
      }
      case '--faults': {
        const wanted = value();
        if (!(faultSets as readonly string[]).includes(wanted)) {
          throw new Error(`unknown fault set "${wanted}" (known: ${faultSets.join(', ')})`);
        }
        faults = wanted as FaultSet;
        break;
      }
      case '--seed':
        seed = positiveInteger(flag, value());
        break;
      case '--cycles':
        cycles = positiveInteger(flag, value());
        break;
      default:
        throw new Error(
          `unknown argument "${argument}" (known: --quick, --backends a,b, --scenarios mutex,rwlock,semaphore,election, --faults standard|network|clock, --seed N, --cycles N, --dump DIR, --scale, --no-write, --verbose)`,
        );
    }
  }
  scenarios ??= quick ? quickScenarios : scenarioNames;
  return { quick, backends, seed, cycles, write, scale, verbose, dump, scenarios, faults };
}

function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} must be a positive integer`);
  return value;
}
