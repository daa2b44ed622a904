import type { ServerProcess } from './managed-process.js';
import {
  isProcessStopped,
  listDescendants,
  signalProcess,
  signalProcessTree,
  waitForProcessesToExit,
  waitForProcessesToStop,
} from './process-tree.js';
import type { ServerHandle, ServerInfo, ServerKind } from './server-handle.js';
import type { ServerOperations, ServerTarget } from './server-operations.js';
import { removeTemporaryDirectory } from './temporary-directory.js';

/** How long a graceful stop may take before the server is SIGKILLed. */
const gracefulStopTimeoutMs = 10_000;
/** How long a SIGKILLed process tree may take to disappear. */
const killTimeoutMs = 10_000;

/** Everything a {@link ControllableServer} is made of. */
export interface ControllableServerParts {
  readonly operations: ServerOperations;
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly temporaryDirectory: string;
  readonly dataDirectory: string | undefined;
  readonly logPath: string;
  readonly command: readonly string[];
  readonly process: ServerProcess;
  /**
   * Starts the server again on the same port and data directory and waits until it is ready;
   * absent for handles rebuilt by `attachServer`.
   */
  readonly relaunch?: (() => Promise<ServerProcess>) | undefined;
}

/** A server whose processes this machine can signal: started here, or attached to by pid. */
export class ControllableServer implements ServerHandle {
  readonly kind: ServerKind;
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly controllable = true;
  readonly logPath: string;
  readonly #parts: ControllableServerParts;
  #process: ServerProcess;
  #stopped = false;

  constructor(parts: ControllableServerParts) {
    this.#parts = parts;
    this.kind = parts.operations.kind;
    this.host = parts.host;
    this.port = parts.port;
    this.url = parts.url;
    this.logPath = parts.logPath;
    this.#process = parts.process;
  }

  get pid(): number | undefined {
    return this.#stopped ? undefined : this.#process.pid;
  }

  async pause(): Promise<void> {
    const pid = this.#requireRunning('pause');
    const tree = signalProcessTree(pid, 'SIGSTOP');
    if (!(await waitForProcessesToStop(tree, 2_000))) {
      throw new Error(`${this.#name()}: SIGSTOP did not stop process ${pid} within 2000 ms`);
    }
  }

  async resume(): Promise<void> {
    const pid = this.#requireRunning('resume');
    signalProcessTree(pid, 'SIGCONT');
  }

  async kill(): Promise<void> {
    this.#requireNotStopped('kill');
    const pid = this.#process.pid;
    if (!this.#process.isAlive()) return;
    const tree = signalProcessTree(pid, 'SIGKILL');
    await this.#process.waitForExit(killTimeoutMs);
    if (!(await waitForProcessesToExit(tree, killTimeoutMs))) {
      throw new Error(`${this.#name()}: processes ${tree.join(', ')} survived SIGKILL`);
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    await this.#halt();
    await removeTemporaryDirectory(this.#parts.temporaryDirectory);
    this.#stopped = true;
  }

  async restart(): Promise<void> {
    this.#requireNotStopped('restart');
    const relaunch = this.#parts.relaunch;
    if (relaunch === undefined) {
      throw new Error(
        `${this.#name()}: restart() is not supported on a handle rebuilt by attachServer(): ` +
          'the server belongs to the process that started it (vitest globalSetup). ' +
          'Tests that need restart() should start their own server in the test file ' +
          '(startRedisServers, startPostgres, startMariaDb, startZooKeeper, startEtcd).',
      );
    }
    await this.#halt();
    this.#process = await relaunch();
  }

  async dropClientConnections(): Promise<number> {
    const pid = this.#requireRunning('dropClientConnections');
    if (isProcessStopped(pid)) {
      throw new Error(`${this.#name()} is paused: resume() it before dropClientConnections()`);
    }
    return this.#parts.operations.dropClientConnections(this.#target(pid));
  }

  describe(): ServerInfo {
    return {
      kind: this.kind,
      host: this.host,
      port: this.port,
      url: this.url,
      controllable: true,
      pid: this.pid,
      temporaryDirectory: this.#parts.temporaryDirectory,
      dataDirectory: this.#parts.dataDirectory,
      logPath: this.logPath,
      command: this.#parts.command,
    };
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** Stops the current process gracefully (SIGKILL on timeout), keeping the data directory. */
  async #halt(): Promise<void> {
    const serverProcess = this.#process;
    const pid = serverProcess.pid;
    if (!serverProcess.isAlive()) return;
    const tree = [pid, ...listDescendants(pid)];
    signalProcess(pid, this.#parts.operations.gracefulStopSignal);
    // A paused server must run again to act on the stop signal.
    signalProcessTree(pid, 'SIGCONT');
    if (!(await serverProcess.waitForExit(gracefulStopTimeoutMs))) {
      signalProcessTree(pid, 'SIGKILL');
      await serverProcess.waitForExit(killTimeoutMs);
    }
    if (!(await waitForProcessesToExit(tree, gracefulStopTimeoutMs))) {
      for (const leftover of tree) signalProcess(leftover, 'SIGKILL');
      await waitForProcessesToExit(tree, killTimeoutMs);
    }
  }

  #target(pid: number): ServerTarget {
    return {
      host: this.host,
      port: this.port,
      url: this.url,
      pid,
      dataDirectory: this.#parts.dataDirectory,
    };
  }

  #name(): string {
    return `${this.kind} server on ${this.host}:${this.port}`;
  }

  #requireNotStopped(hook: string): void {
    if (this.#stopped) throw new Error(`${this.#name()}: ${hook}() called after stop()`);
  }

  #requireRunning(hook: string): number {
    this.#requireNotStopped(hook);
    if (!this.#process.isAlive()) {
      throw new Error(`${this.#name()}: ${hook}() needs a running server, but it was killed`);
    }
    return this.#process.pid;
  }
}
