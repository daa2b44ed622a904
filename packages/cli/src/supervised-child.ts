import { type ChildProcess, spawn } from 'node:child_process';
import { exitCodes } from './exit-codes.js';
import type { Output } from './output.js';

/** How the command ended. */
export type ChildOutcome =
  | { readonly kind: 'exited'; readonly code: number }
  | { readonly kind: 'signalled'; readonly signal: NodeJS.Signals }
  | { readonly kind: 'not-started'; readonly error: NodeJS.ErrnoException };

/**
 * The command lockkit runs under the lock: started with the terminal (stdin, stdout, stderr)
 * and environment of lockkit plus `env`, signalled on request, escalated to SIGKILL.
 */
export class SupervisedChild {
  /** Resolves once, when the command has ended or could not start. */
  readonly outcome: Promise<ChildOutcome>;
  readonly #child: ChildProcess;
  #ended = false;
  #killTimer: NodeJS.Timeout | undefined;

  constructor(argv: readonly [string, ...string[]], env: Readonly<Record<string, string>>) {
    const [program, ...args] = argv;
    this.#child = spawn(program, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    this.outcome = new Promise((resolve) => {
      this.#child.once('error', (error: NodeJS.ErrnoException) => {
        // A failed spawn emits only 'error'; an error after the start (a failed kill) is
        // followed by 'exit', which then decides.
        if (this.#child.pid === undefined) this.#end(resolve, { kind: 'not-started', error });
      });
      this.#child.once('exit', (code, signal) => {
        this.#end(
          resolve,
          signal !== null ? { kind: 'signalled', signal } : { kind: 'exited', code: code ?? 0 },
        );
      });
    });
  }

  /** Sends `signal` to the command, unless it has ended. */
  signal(signal: NodeJS.Signals): void {
    if (!this.#ended && this.#child.pid !== undefined) this.#child.kill(signal);
  }

  /** SIGTERM now, SIGKILL after `graceMs` if the command is still running. */
  terminate(graceMs: number): void {
    this.signal('SIGTERM');
    this.#killTimer ??= setTimeout(() => this.signal('SIGKILL'), graceMs);
  }

  #end(resolve: (outcome: ChildOutcome) => void, outcome: ChildOutcome): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#killTimer);
    resolve(outcome);
  }
}

/** Reports a command that could not start; its exit status (127 not found, else 126). */
export function notStarted(
  outcome: Extract<ChildOutcome, { kind: 'not-started' }>,
  argv: readonly [string, ...string[]],
  output: Output,
): number {
  const missing = outcome.error.code === 'ENOENT';
  output.say(
    `cannot run ${JSON.stringify(argv[0])}: ${missing ? 'command not found' : outcome.error.message}`,
  );
  return missing ? exitCodes.notFound : exitCodes.cannotExecute;
}
