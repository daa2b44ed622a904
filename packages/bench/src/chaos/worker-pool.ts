import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { ChaosLedger } from './chaos-ledger.js';
import type {
  DeclaredBounds,
  OrchestratorMessage,
  WorkerConfig,
  WorkerReport,
} from './chaos-messages.js';
import { type ChildReaper, startChildReaper } from './child-reaper.js';

const workerModule = fileURLToPath(new URL('./chaos-worker.ts', import.meta.url));

/** One worker process. */
export interface Worker {
  readonly pid: number;
  readonly child: ChildProcess;
  /** The last lines it wrote to stdout/stderr (shown when it fails). */
  readonly output: string[];
  /** SIGSTOPped by a fault right now. */
  paused: boolean;
  /** Killed by a fault (SIGKILL), or told to stop: its exit is expected. */
  expectExit: boolean;
  /** `--faults network`: the network namespace it runs in. */
  readonly namespace?: string | undefined;
  /** `--faults clock`: the libfaketime timestamp file that sets its wall clock's offset. */
  readonly clockFile?: string | undefined;
  exited: Promise<void>;
}

/** Where a worker runs (`--faults network`): its namespace, and the config pointing at relays. */
export interface Placement {
  readonly namespace?: string | undefined;
  readonly config: WorkerConfig;
  /** Added to the environment (libfaketime's, for `--faults clock`). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly clockFile?: string | undefined;
}

const everyPid = new Set<number>();

/** SIGKILLs every worker still alive (on this process's exit). */
function killAllWorkers(): void {
  for (const pid of everyPid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  everyPid.clear();
}

// Installed when this module loads, so it runs before exit hooks added later (the lab's
// directory removal needs the workers dead first).
process.on('exit', killAllWorkers);

/**
 * The chaos workers of one backend: spawns them (under tsx, IPC with advanced
 * serialization), routes their reports to the ledger and acknowledges fenced writes, and
 * kills them all — on `close()`, on this process's exit, and through a watchdog if this
 * process is SIGKILLed.
 */
export class WorkerPool {
  readonly workers: Map<number, Worker> = new Map();
  readonly #config: WorkerConfig;
  readonly #ledger: ChaosLedger;
  readonly #verbose: boolean;
  readonly #reaper: ChildReaper;
  readonly #placement: (() => Placement) | undefined;
  #bounds: DeclaredBounds | undefined;

  constructor(
    config: WorkerConfig,
    ledger: ChaosLedger,
    verbose: boolean,
    placement?: () => Placement,
  ) {
    this.#placement = placement;
    this.#config = config;
    this.#ledger = ledger;
    this.#verbose = verbose;
    this.#reaper = startChildReaper();
  }

  /** The bounds the workers' provider declared (after the first worker is ready). */
  get bounds(): DeclaredBounds {
    if (!this.#bounds) throw new Error('no worker is ready yet');
    return this.#bounds;
  }

  /** Workers that are alive and not paused. */
  running(): Worker[] {
    return [...this.workers.values()].filter((worker) => !worker.paused && !worker.expectExit);
  }

  /** Starts one worker and resolves once its provider exists (rejects after `timeoutMs`). */
  spawn(timeoutMs = 30_000): Promise<Worker> {
    const placement = this.#placement?.();
    const config = placement?.config ?? this.#config;
    // In a namespace: `ip netns exec` execs node, so the child's pid is node's (and IPC works).
    const child = fork(workerModule, [JSON.stringify(config)], {
      ...(placement?.env ? { env: { ...process.env, ...placement.env } } : {}),
      ...(placement?.namespace
        ? {
            execPath: 'ip',
            execArgv: ['netns', 'exec', placement.namespace, process.execPath, '--import', 'tsx'],
          }
        : { execArgv: ['--import', 'tsx'] }),
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const pid = child.pid;
    if (pid === undefined) return Promise.reject(new Error('could not start a chaos worker'));
    everyPid.add(pid);
    this.#reaper.add(pid);
    const output: string[] = [];
    const collect = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        output.push(line);
        if (output.length > 40) output.shift();
        if (this.#verbose) process.stderr.write(`  [worker ${pid}] ${line}\n`);
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('error', () => undefined); // send() to a dead worker; its exit is handled below
    const worker: Worker = {
      pid,
      child,
      output,
      paused: false,
      expectExit: false,
      namespace: placement?.namespace,
      clockFile: placement?.clockFile,
      exited: new Promise<void>((resolve) => {
        child.once('exit', (code, signal) => {
          everyPid.delete(pid);
          this.#reaper.forget(pid);
          this.workers.delete(pid);
          // Code 70: the worker reported a fatal error itself (see chaos-worker.ts).
          if (!worker.expectExit && code !== 0 && code !== 70) {
            this.#ledger.markCrashed(
              pid,
              `worker exited unexpectedly (${signal ?? `code ${code}`}); last output:\n    ${output.slice(-12).join('\n    ')}`,
            );
          }
          resolve();
        });
      }),
    };
    this.workers.set(pid, worker);
    return new Promise<Worker>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`worker ${pid} not ready after ${timeoutMs} ms:\n${output.join('\n')}`));
      }, timeoutMs);
      void worker.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`worker ${pid} exited before it was ready:\n${output.join('\n')}`));
      });
      child.on('message', (report: WorkerReport) => {
        if (report.type === 'ready') {
          this.#bounds ??= report.bounds;
          clearTimeout(timer);
          resolve(worker);
          return;
        }
        const verdict = this.#ledger.receive(pid, report);
        if (verdict !== undefined && 'id' in report) {
          this.#send(worker, { type: 'ack', id: report.id, accepted: verdict });
        }
      });
    });
  }

  /** SIGKILLs a worker (synchronously) and resolves the time once it is gone. */
  kill(worker: Worker): Promise<number> {
    worker.expectExit = true;
    const at = monotonicMs();
    this.#ledger.markKilled(worker.pid, at);
    worker.child.kill('SIGKILL');
    return worker.exited.then(() => at);
  }

  /** SIGSTOP; returns when it was sent (the worker is frozen from then on). */
  pause(worker: Worker): number {
    worker.paused = true;
    worker.child.kill('SIGSTOP');
    return monotonicMs();
  }

  /** SIGCONT; returns the time just BEFORE it was sent (the worker may run from then on). */
  resume(worker: Worker): number {
    const at = monotonicMs();
    worker.child.kill('SIGCONT');
    worker.paused = false;
    return at;
  }

  /**
   * Asks every worker to finish its critical sections and close its provider; SIGKILLs
   * whoever is not gone after `graceMs`. Always leaves no worker behind.
   */
  async close(graceMs = 8000): Promise<void> {
    const workers = [...this.workers.values()];
    for (const worker of workers) {
      worker.expectExit = true;
      if (worker.paused) this.resume(worker);
      this.#send(worker, { type: 'stop' });
    }
    const all = Promise.all(workers.map((worker) => worker.exited));
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (late) {
      for (const worker of this.workers.values()) worker.child.kill('SIGKILL');
      await all;
    }
    this.#reaper.close();
  }

  #send(worker: Worker, message: OrchestratorMessage): void {
    if (!worker.child.connected) return;
    worker.child.send(message, (error) => {
      if (error) {
        // The worker died meanwhile; its exit handler records it.
      }
    });
  }
}
