import { createLockProvider, type LockHandle, LockTimeoutError, redactUrl } from 'lockkit';
import { exitCodes } from '../exit-codes.js';
import { timeoutMessage } from '../failure.js';
import type { RunCommand } from '../invocation.js';
import { keepAlive } from '../keep-alive.js';
import { type Acquirer, acquirerFor } from '../lock-target.js';
import type { Output } from '../output.js';
import { onTerminationSignals, signalExitCode } from '../signals.js';
import { notStarted, SupervisedChild } from '../supervised-child.js';

/** Why a wait was cut short by a signal to lockkit. */
class SignalledWhileWaiting extends Error {
  readonly signal: NodeJS.Signals;

  constructor(signal: NodeJS.Signals) {
    super(`received ${signal} while waiting for the lock`);
    this.signal = signal;
  }
}

/**
 * `lockkit run`: takes the lock, runs the command with the fencing token in its environment,
 * passes termination signals on, stops the command if the lock is lost, releases the lock
 * once the command has ended, and returns the exit status (see `exitCodes`; when the lock
 * could not be taken in time, `run.conflictExitCode`). Errors it does not handle (bad URL,
 * backend unavailable) are thrown for `main` to report.
 */
export async function runCommand(run: RunCommand, output: Output): Promise<number> {
  const provider = await createLockProvider(run.url);
  let child: SupervisedChild | undefined;
  const wait = new AbortController();
  const stopListening = onTerminationSignals((signal) => {
    if (child) {
      if (run.verbose) output.say(`passing ${signal} on to the command`);
      child.signal(signal);
    } else {
      wait.abort(new SignalledWhileWaiting(signal));
    }
  });
  try {
    const acquirer = acquirerFor(provider, run.name, run.target);
    let handle: LockHandle;
    const stopKeepingAlive = keepAlive();
    try {
      handle = await acquire(acquirer, run, wait.signal, output, provider.backend);
    } catch (error) {
      if (error instanceof SignalledWhileWaiting) {
        output.say(`${error.message}; the command did not run`);
        return signalExitCode(error.signal);
      }
      if (LockTimeoutError.isInstance(error)) {
        output.say(timeoutMessage(error));
        return run.conflictExitCode;
      }
      throw error;
    } finally {
      stopKeepingAlive();
    }
    if (handle.signal.aborted) {
      await handle.release();
      output.say(
        `${acquirer.description} was lost right after it was acquired; the command did not run`,
      );
      return exitCodes.lost;
    }

    const started = new SupervisedChild(run.argv, {
      LOCKKIT_FENCING_TOKEN: String(handle.fencingToken),
      LOCKKIT_LOCK_NAME: run.name,
      LOCKKIT_LOCK_KIND: acquirer.kind,
      LOCKKIT_BACKEND: provider.backend,
    });
    child = started;
    let lost = false;
    const onLost = (): void => {
      lost = true;
      const reason = handle.signal.reason instanceof Error ? handle.signal.reason.message : 'lost';
      output.say(
        `${reason}. Stopping the command: SIGTERM now, SIGKILL in ${run.killAfterMs} ms if it is still running.`,
      );
      started.terminate(run.killAfterMs);
    };
    handle.signal.addEventListener('abort', onLost, { once: true });
    const outcome = await started.outcome;
    handle.signal.removeEventListener('abort', onLost);

    const stillHeld = await handle.release();
    if (run.verbose) output.say(`released ${acquirer.description} (held throughout: ${stillHeld})`);
    if (outcome.kind === 'not-started') return notStarted(outcome, run.argv, output);
    if (lost) return exitCodes.lost;
    if (!stillHeld) {
      output.say(
        `${acquirer.description} was no longer held when the command ended: another process may have taken it meanwhile, so treat the command's work as unsafe.`,
      );
      return exitCodes.lost;
    }
    return outcome.kind === 'signalled' ? signalExitCode(outcome.signal) : outcome.code;
  } finally {
    await provider.close();
    stopListening();
  }
}

async function acquire(
  acquirer: Acquirer,
  run: RunCommand,
  signal: AbortSignal,
  output: Output,
  backend: string,
): Promise<LockHandle> {
  const startedAt = performance.now();
  let handle = await acquirer.tryAcquire({ timeout: 0, signal });
  if (!handle) {
    if (run.timeoutMs === 0) throw new LockTimeoutError(run.name, 0);
    if (run.verbose) {
      output.say(`waiting for ${acquirer.description} on ${redactUrl(run.url)} (${backend})`);
    }
    const remaining = run.timeoutMs - (performance.now() - startedAt);
    try {
      handle = await acquirer.acquire({ timeout: Math.max(0, remaining), signal });
    } catch (error) {
      // Report the caller's whole timeout, not what was left after the first attempt.
      if (LockTimeoutError.isInstance(error)) throw new LockTimeoutError(run.name, run.timeoutMs);
      throw error;
    }
  }
  if (run.verbose) {
    const waited = Math.round(performance.now() - startedAt);
    output.say(
      `acquired ${acquirer.description}, fencing token ${handle.fencingToken}, after ${waited} ms`,
    );
  }
  return handle;
}
