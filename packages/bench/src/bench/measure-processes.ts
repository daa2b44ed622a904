import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProviderSpec } from '../backends/provider-spec.js';
import type { Contender } from './contender.js';
import type { ScaleWorkerJob, ScaleWorkerReply } from './scale-worker.js';

/** What many workers in several processes on one lock achieved. */
export interface ProcessesResult {
  readonly processes: number;
  readonly workers: number;
  /** Critical sections per second, all workers together. */
  readonly perSecond: number;
  /** The fewest and most critical sections one worker got. */
  readonly fewest: number;
  readonly most: number;
}

/** One worker process's report. */
export interface ProcessCounts {
  readonly perWorker: readonly number[];
  readonly elapsedMs: number;
}

/**
 * Adds the processes' counts up: the rate is over the longest process's time (they start
 * together on one `go`, so that is the run's length).
 */
export function combineProcessCounts(reports: readonly ProcessCounts[]): ProcessesResult {
  const counts = reports.flatMap((report) => report.perWorker);
  const elapsed = Math.max(0, ...reports.map((report) => report.elapsedMs));
  const total = counts.reduce((sum, count) => sum + count, 0);
  return {
    processes: reports.length,
    workers: counts.length,
    perSecond: elapsed > 0 ? (total * 1000) / elapsed : Number.NaN,
    fewest: counts.length > 0 ? Math.min(...counts) : Number.NaN,
    most: counts.length > 0 ? Math.max(...counts) : Number.NaN,
  };
}

const workerScript = fileURLToPath(new URL('./scale-worker.ts', import.meta.url));

/** Waits for the next message of `child` (rejects when it exits first). */
function nextReply(child: ChildProcess): Promise<ScaleWorkerReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: ScaleWorkerReply): void => {
      child.off('exit', onExit);
      if (reply.type === 'failed') reject(new Error(reply.message));
      else resolve(reply);
    };
    const onExit = (code: number | null): void => {
      child.off('message', onMessage);
      reject(new Error(`worker process exited (${code}) before it reported`));
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * `processes` worker processes (`scale-worker.ts` under tsx), each with `workersPerProcess`
 * clients of `contender`, loop on one lock for `durationMs`, all started by one `go` once
 * every client is open. Overlaps are not counted here (the 8-worker row checks them in one
 * process); a run still going 30 s after its time is abandoned (the processes killed).
 */
export async function measureProcesses(
  contender: Contender,
  spec: ProviderSpec,
  directory: string,
  processes: number,
  workersPerProcess: number,
  durationMs: number,
): Promise<ProcessesResult> {
  const job: ScaleWorkerJob = {
    spec,
    directory,
    library: contender.library,
    workers: workersPerProcess,
    durationMs,
    name: 'bench:scale:workers',
  };
  const children = Array.from({ length: processes }, () =>
    fork(workerScript, [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' }),
  );
  const stalled = setTimeout(() => {
    for (const child of children) child.kill('SIGKILL');
  }, durationMs + 60_000);
  try {
    const ready = children.map((child) => nextReply(child));
    for (const child of children) child.send(job);
    await Promise.all(ready);
    const done = children.map((child) => nextReply(child));
    for (const child of children) child.send('go');
    const reports = (await Promise.all(done)) as Extract<ScaleWorkerReply, { type: 'done' }>[];
    return combineProcessCounts(reports);
  } finally {
    // Each process closes its clients and exits; give it 10 s, then kill it.
    await Promise.all(children.map((child) => exited(child, 10_000)));
    clearTimeout(stalled);
  }
}

function exited(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
