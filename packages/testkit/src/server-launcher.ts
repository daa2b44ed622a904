import { ControllableServer } from './controllable-server.js';
import { findFreePort } from './free-port.js';
import { type LaunchSpec, ManagedProcess } from './managed-process.js';
import { signalProcessTree, waitForProcessesToExit } from './process-tree.js';
import { ServerStartError, waitUntilReady } from './readiness.js';
import type { ServerOperations, ServerTarget } from './server-operations.js';
import { createTemporaryDirectory, removeTemporaryDirectory } from './temporary-directory.js';

/** How many ports to try when another process takes the chosen port first. */
const portAttempts = 3;

/** Default overall readiness deadline for a server start. */
export const defaultStartTimeoutMs = 30_000;

/** A kind-specific recipe for running one server in its temporary directory. */
export interface ServerDefinition {
  readonly operations: ServerOperations;
  readonly host: string;
  readonly temporaryDirectory: string;
  readonly dataDirectory: string;
  readonly logPath: string;
  readonly startTimeoutMs: number;
  /** The command that runs the server on `port` (may write config files first). */
  launchSpec(port: number): LaunchSpec | Promise<LaunchSpec>;
  /** The connection URL for `port`. */
  url(port: number): string;
  /** Runs once after the first successful start, e.g. to create the `test` database. */
  afterFirstStart?(target: ServerTarget): Promise<void>;
}

function targetOf(definition: ServerDefinition, port: number, pid: number): ServerTarget {
  return {
    host: definition.host,
    port,
    url: definition.url(port),
    pid,
    dataDirectory: definition.dataDirectory,
  };
}

async function killAndWait(child: ManagedProcess): Promise<void> {
  const tree = signalProcessTree(child.pid, 'SIGKILL');
  await child.exited;
  await waitForProcessesToExit(tree, 10_000);
}

/** Launches the server on `port` and waits until it answers its readiness probe. */
export async function launchAndWaitUntilReady(
  definition: ServerDefinition,
  port: number,
): Promise<ManagedProcess> {
  const spec = await definition.launchSpec(port);
  const child = await ManagedProcess.launch(spec);
  try {
    await waitUntilReady({
      description: `${definition.operations.kind} server (${spec.command}) on ${definition.host}:${port}`,
      process: child,
      check: () => definition.operations.checkReady(targetOf(definition, port, child.pid)),
      logPath: definition.logPath,
      timeoutMs: definition.startTimeoutMs,
    });
    return child;
  } catch (error) {
    await killAndWait(child);
    throw error;
  }
}

/**
 * Starts the server on a free port, retrying on another port if the chosen one was taken in the
 * meantime, and returns its handle. (The caller removes the temporary directory on failure.)
 */
export async function startControllableServer(
  definition: ServerDefinition,
): Promise<ControllableServer> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await findFreePort(definition.host);
    let child: ManagedProcess;
    try {
      child = await launchAndWaitUntilReady(definition, port);
    } catch (error) {
      if (error instanceof ServerStartError && error.addressInUse && attempt < portAttempts) {
        continue;
      }
      throw error;
    }
    try {
      await definition.afterFirstStart?.(targetOf(definition, port, child.pid));
    } catch (error) {
      await killAndWait(child);
      throw error;
    }
    const spec = await definition.launchSpec(port);
    return new ControllableServer({
      operations: definition.operations,
      host: definition.host,
      port,
      url: definition.url(port),
      temporaryDirectory: definition.temporaryDirectory,
      dataDirectory: definition.dataDirectory,
      logPath: definition.logPath,
      command: [spec.command, ...spec.args],
      process: child,
      relaunch: () => launchAndWaitUntilReady(definition, port),
    });
  }
}

/**
 * Creates a temporary directory, runs `body` with it, and removes the directory if `body` fails.
 */
export async function withTemporaryDirectory<Result>(
  label: string,
  body: (directory: string) => Promise<Result>,
): Promise<Result> {
  const directory = await createTemporaryDirectory(label);
  try {
    return await body(directory);
  } catch (error) {
    await removeTemporaryDirectory(directory);
    throw error;
  }
}
