import { existsSync, readdirSync, readFileSync } from 'node:fs';

function stateOf(statPath: string): string | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    // The state letter follows the parenthesised command name, which may itself contain ')'.
    const end = stat.lastIndexOf(')');
    return stat.slice(end + 2, end + 3);
  } catch {
    return undefined;
  }
}

const isDeadState = (state: string | undefined): boolean =>
  state === undefined || state === 'Z' || state === 'X';

/**
 * Whether a process with this pid exists and has not fully exited.
 *
 * A zombie counts as exited only once all its threads have exited: the main thread of a
 * multi-threaded server (Redis, MariaDB, Java) can be a zombie while other threads still hold
 * its file descriptors, so its listening socket would still accept connections.
 * Signals by pid work across processes, so this also serves handles rebuilt in a test worker
 * for a server that another process started.
 */
export function isProcessAlive(pid: number): boolean {
  const state = stateOf(`/proc/${pid}/stat`);
  if (state === undefined) return existsSync('/proc/self/stat') ? false : signalExists(pid);
  if (!isDeadState(state)) return true;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return threads.some((thread) => !isDeadState(stateOf(`/proc/${pid}/task/${thread}/stat`)));
}

function signalExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function childrenOf(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const task of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch (error) {
      // Kernels without CONFIG_PROC_CHILDREN: fall back to scanning every process.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && task === String(pid)) {
        return undefined;
      }
      continue;
    }
    for (const word of text.split(' ')) {
      if (word.trim() !== '') children.push(Number(word));
    }
  }
  return children;
}

function parentPids(): Map<number, number[]> {
  const byParent = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const parent = Number(fields[1]);
      const siblings = byParent.get(parent) ?? [];
      siblings.push(Number(entry));
      byParent.set(parent, siblings);
    } catch {
      // The process ended while we were looking.
    }
  }
  return byParent;
}

/** All descendants of `pid` (children, grandchildren, …), nearest first. */
export function listDescendants(pid: number): number[] {
  const found: number[] = [];
  let scanned: Map<number, number[]> | undefined;
  const queue = [pid];
  for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
    let children = childrenOf(current);
    if (children === undefined) {
      scanned ??= parentPids();
      children = scanned.get(current) ?? [];
    }
    for (const child of children) {
      if (child === pid || found.includes(child)) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Sends a signal to one process, ignoring a process that is already gone. */
export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Sends a signal to `pid` and every descendant, and returns the pids signalled.
 *
 * The root is signalled first so that a stopped or killed server cannot fork new children
 * while its tree is being walked. PostgreSQL backends call `setsid()`, so signalling the
 * process group would miss them: the tree is walked through `/proc` instead.
 */
export function signalProcessTree(pid: number, signal: NodeJS.Signals): number[] {
  const stopFirst = signal === 'SIGKILL' || signal === 'SIGSTOP';
  if (stopFirst) signalProcess(pid, 'SIGSTOP');
  const descendants = listDescendants(pid);
  if (!stopFirst) signalProcess(pid, signal);
  for (const descendant of descendants) signalProcess(descendant, signal);
  if (signal === 'SIGKILL') signalProcess(pid, 'SIGKILL');
  return [pid, ...descendants];
}

/**
 * Waits until none of `pids` is alive, polling every `pollIntervalMs`.
 *
 * Used for processes that are not our children (their exit cannot be awaited as an event).
 *
 * @returns `true` when they all exited, `false` when `timeoutMs` ran out first.
 */
export async function waitForProcessesToExit(
  pids: readonly number[],
  timeoutMs: number,
  pollIntervalMs = 20,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!pids.some(isProcessAlive)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
}

/** Whether `pid` is stopped by a signal (state `T`) in every thread, i.e. paused. */
export function isProcessStopped(pid: number): boolean {
  if (stateOf(`/proc/${pid}/stat`) !== 'T') return false;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return threads.every((thread) => {
    const state = stateOf(`/proc/${pid}/task/${thread}/stat`);
    return state === 'T' || isDeadState(state);
  });
}

/**
 * Waits until every live process among `pids` is stopped, so that a paused server cannot
 * answer a request sent right after `pause()` returns.
 */
export async function waitForProcessesToStop(
  pids: readonly number[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (pids.every((pid) => isProcessStopped(pid) || !isProcessAlive(pid))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
