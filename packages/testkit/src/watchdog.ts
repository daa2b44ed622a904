import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * The watchdog, a bash script: `$1` is the server pid, `$2` an optional temporary directory.
 *
 * Its stdin is a pipe from the process that started the server. The kernel closes that pipe
 * when the parent dies for any reason, SIGKILL included, so reading end-of-file means "parent
 * gone": the watchdog then SIGKILLs the server, its whole process tree and its process group,
 * and removes the temporary directory. A line `exit` means the parent saw the server exit and
 * the watchdog can leave quietly; it also leaves when the server is gone (checked every 300 ms).
 */
const watchdogScript = `
server="$1"
directory="$2"
kill_tree() {
  kill -STOP "$1" 2>/dev/null
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$child"; done
  kill -KILL "$1" 2>/dev/null
}
while kill -0 "$server" 2>/dev/null; do
  line=""
  read -r -t 0.3 line
  status=$?
  if [ "$status" -eq 0 ] && [ "$line" = "exit" ]; then exit 0; fi
  if [ "$status" -ne 0 ] && [ "$status" -le 128 ]; then
    kill_tree "$server"
    kill -KILL -- "-$server" 2>/dev/null
    case "$directory" in
      */lockkit-testkit-*) rm -rf -- "$directory" ;;
    esac
    exit 0
  fi
done
`;

/** A running watchdog for one server process. */
export interface Watchdog {
  /** Tells the watchdog that the server exited normally, so it leaves without killing anything. */
  release(): void;
}

/**
 * Starts a detached watchdog that SIGKILLs the server `pid` (and removes `directory`) as soon
 * as this process dies, even by SIGKILL. It does not keep this process's event loop alive.
 */
export function startWatchdog(pid: number, directory: string | undefined): Watchdog {
  const child: ChildProcess = spawn(
    'bash',
    ['-c', watchdogScript, 'lockkit-watchdog', String(pid), directory ?? ''],
    {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  child.on('error', () => {
    // bash missing: the exit hook still covers normal exits.
  });
  child.stdin?.on('error', () => {
    // The watchdog already left (server gone); nothing to tell it.
  });
  child.unref();
  (child.stdin as Socket | null)?.unref();
  return {
    release(): void {
      if (child.stdin === null || child.stdin.destroyed) return;
      child.stdin.end('exit\n');
    },
  };
}
