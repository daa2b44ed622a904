import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * A detached bash watchdog that SIGKILLs the chaos workers if the orchestrator dies without
 * cleaning up, even by SIGKILL (a SIGSTOPped worker would otherwise stay forever). Its stdin
 * is a pipe from the orchestrator: lines `add PID` / `forget PID`; end-of-file (the
 * orchestrator is gone) means "kill every PID still listed".
 */
const script = `
declare -A pids
while read -r command pid; do
  case "$command" in
    add) pids[$pid]=1 ;;
    forget) unset "pids[$pid]" ;;
  esac
done
for pid in "\${!pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
`;

/** Handle of the watchdog. */
export interface ChildReaper {
  add(pid: number): void;
  forget(pid: number): void;
  /** Ends the watchdog; it kills whatever is still listed. */
  close(): void;
}

/** Starts the watchdog; it does not keep the orchestrator's event loop alive. */
export function startChildReaper(): ChildReaper {
  const watchdog: ChildProcess = spawn('bash', ['-c', script, 'lockkit-chaos-reaper'], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => {
    // No bash: the orchestrator's own exit handler still kills the workers.
  });
  watchdog.stdin?.on('error', () => undefined);
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
  const write = (line: string): void => {
    if (watchdog.stdin && !watchdog.stdin.destroyed) watchdog.stdin.write(`${line}\n`);
  };
  return {
    add: (pid) => write(`add ${pid}`),
    forget: (pid) => write(`forget ${pid}`),
    close: () => watchdog.stdin?.end(),
  };
}
