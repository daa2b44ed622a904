import {
  BackendNotInstalledError,
  BackendUnavailableError,
  InvalidArgumentError,
  LockTimeoutError,
} from 'lockkit';
import { exitCodes } from './exit-codes.js';

/** How `main` reports an error: one line on stderr, and the exit status. */
export interface Failure {
  readonly exitCode: number;
  readonly message: string;
}

/** The exit status and one-line message for an error a command threw. */
export function failureOf(error: unknown): Failure {
  if (InvalidArgumentError.isInstance(error)) {
    return { exitCode: exitCodes.usage, message: error.message };
  }
  if (LockTimeoutError.isInstance(error)) {
    return { exitCode: exitCodes.timeout, message: timeoutMessage(error) };
  }
  if (BackendNotInstalledError.isInstance(error)) {
    return { exitCode: exitCodes.unavailable, message: error.message };
  }
  if (BackendUnavailableError.isInstance(error)) {
    const cause =
      error.cause instanceof Error && !error.message.includes(error.cause.message)
        ? ` (${error.cause.message})`
        : '';
    return {
      exitCode: exitCodes.unavailable,
      message: `backend unavailable: ${oneLine(error.message)}${oneLine(cause)}`,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    exitCode: exitCodes.internal,
    message: `internal error: ${oneLine(message)} (LOCKKIT_DEBUG=1 shows the stack trace)`,
  };
}

/** What lockkit says when the lock could not be taken in time. */
export function timeoutMessage(error: LockTimeoutError): string {
  return error.timeoutMs === 0
    ? `${JSON.stringify(error.lockName)} is held elsewhere; not waiting`
    : `timed out after ${error.timeoutMs} ms waiting for ${JSON.stringify(error.lockName)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
