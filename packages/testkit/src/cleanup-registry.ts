import { rmSync } from 'node:fs';
import { signalProcessTree } from './process-tree.js';

const livePids = new Set<number>();
const liveDirectories = new Set<string>();
let exitHookInstalled = false;

function killEverythingSynchronously(): void {
  for (const pid of livePids) {
    try {
      signalProcessTree(pid, 'SIGKILL');
    } catch {
      // Best effort: the process is gone or not ours to signal.
    }
  }
  livePids.clear();
  for (const directory of liveDirectories) {
    try {
      rmSync(directory, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort; the watchdog removes it too when this process is gone.
    }
  }
  liveDirectories.clear();
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killEverythingSynchronously);
}

/** Remembers a server process so that it is SIGKILLed if this process exits without stopping it. */
export function trackProcess(pid: number): void {
  installExitHook();
  livePids.add(pid);
}

/** Forgets a process that has exited. */
export function untrackProcess(pid: number): void {
  livePids.delete(pid);
}

/** Remembers a temporary directory that must be removed if this process exits. */
export function trackDirectory(directory: string): void {
  installExitHook();
  liveDirectories.add(directory);
}

/** Forgets a temporary directory that has been removed. */
export function untrackDirectory(directory: string): void {
  liveDirectories.delete(directory);
}
