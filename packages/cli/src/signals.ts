import { constants } from 'node:os';

/** Signals lockkit passes on to the command (and that stop a wait). */
export const forwardedSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The exit status a shell reports for a process killed by `signal`: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Calls `handler` for each of {@link forwardedSignals} until the returned function is called. */
export function onTerminationSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  for (const signal of forwardedSignals) process.on(signal, handler);
  return () => {
    for (const signal of forwardedSignals) process.off(signal, handler);
  };
}
