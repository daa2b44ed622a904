import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { trackProcess, untrackProcess } from './cleanup-registry.js';
import { isProcessAlive, waitForProcessesToExit } from './process-tree.js';
import { startWatchdog } from './watchdog.js';

/** What to run, and where its output goes. */
export interface LaunchSpec {
  /** Absolute path of the executable. */
  readonly command: string;
  readonly args: readonly string[];
  /** File that receives the process's stdout and stderr (appended to). */
  readonly logPath: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this user id (requires root). */
  readonly uid?: number;
  /** Run with this group id (requires root). */
  readonly gid?: number;
  /** Temporary directory the watchdog removes if this process dies without cleaning up. */
  readonly temporaryDirectory?: string;
}

/** How a process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A server process as seen by a handle: its pid and a way to wait for it to end. */
export interface ServerProcess {
  readonly pid: number;
  /** Whether it is still running (a stopped, i.e. paused, process counts as running). */
  isAlive(): boolean;
  /** Resolves `true` once it has exited, or `false` when `timeoutMs` ran out first. */
  waitForExit(timeoutMs: number): Promise<boolean>;
}

/**
 * A child process started by this process: tracked so that it is SIGKILLed when this process
 * exits, and watched by a detached watchdog that kills it if this process is itself killed.
 * It runs in its own process group (and session), so terminal signals do not reach it.
 */
export class ManagedProcess implements ServerProcess {
  /** The pid; also the process group id. */
  readonly pid: number;
  /** Settles when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | undefined;

  private constructor(pid: number, exited: Promise<ProcessExit>) {
    this.pid = pid;
    this.exited = exited.then((exit) => {
      this.#exit = exit;
      return exit;
    });
  }

  /** How it ended, or `undefined` while it runs. */
  get exitStatus(): ProcessExit | undefined {
    return this.#exit;
  }

  /** Starts `spec`; rejects if the executable cannot be started at all. */
  static async launch(spec: LaunchSpec): Promise<ManagedProcess> {
    const logFd = openSync(spec.logPath, 'a');
    try {
      const child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        env: spec.env ?? process.env,
        detached: true,
        stdio: ['ignore', logFd, logFd],
        ...(spec.uid === undefined ? {} : { uid: spec.uid }),
        ...(spec.gid === undefined ? {} : { gid: spec.gid }),
      });
      const pid = child.pid;
      if (pid === undefined) {
        const error = await new Promise<Error>((resolve) => child.once('error', resolve));
        throw new Error(`Could not start ${spec.command}: ${error.message}`, { cause: error });
      }
      trackProcess(pid);
      const watchdog = startWatchdog(pid, spec.temporaryDirectory);
      const exited = new Promise<ProcessExit>((resolve) => {
        child.once('exit', (code, signal) => {
          untrackProcess(pid);
          watchdog.release();
          resolve({ code, signal });
        });
      });
      child.unref();
      return new ManagedProcess(pid, exited);
    } finally {
      closeSync(logFd);
    }
  }

  isAlive(): boolean {
    return this.#exit === undefined;
  }

  async waitForExit(timeoutMs: number): Promise<boolean> {
    if (this.#exit !== undefined) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.exited.then(() => true as const), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A server process started by another process (typically vitest's global setup), known only by
 * its pid. Its exit cannot be awaited as an event, so it is polled.
 */
export class ForeignProcess implements ServerProcess {
  readonly pid: number;

  constructor(pid: number) {
    this.pid = pid;
  }

  isAlive(): boolean {
    return isProcessAlive(this.pid);
  }

  waitForExit(timeoutMs: number): Promise<boolean> {
    return waitForProcessesToExit([this.pid], timeoutMs);
  }
}

/**
 * Runs a setup command (such as `initdb`) to completion under the same no-leftovers guarantees
 * as a server; rejects when it fails or takes longer than `timeoutMs` (its output is in
 * `spec.logPath`).
 */
export async function runToCompletion(spec: LaunchSpec, timeoutMs: number): Promise<void> {
  const child = await ManagedProcess.launch(spec);
  if (!(await child.waitForExit(timeoutMs))) {
    process.kill(child.pid, 'SIGKILL');
    await child.exited;
    throw new Error(`${spec.command} did not finish within ${timeoutMs} ms`);
  }
  const status = child.exitStatus;
  if (status?.code !== 0) {
    const how = status?.signal ? `signal ${status.signal}` : `exit code ${status?.code}`;
    throw new Error(`${spec.command} ${spec.args.join(' ')} failed with ${how}`);
  }
}
