import {
  BackendNotInstalledError,
  BackendUnavailableError,
  InvalidArgumentError,
  LockTimeoutError,
} from 'lockkit';
import { type Invocation, parseCommandLine } from './cli-arguments.js';
import { demoCommand } from './commands/demo-command.js';
import { inspectCommand } from './commands/inspect-command.js';
import { runCommand } from './commands/run-command.js';
import { exitCodes } from './exit-codes.js';
import { helpText } from './help-text.js';
import { type Output, processOutput } from './output.js';
import { UsageError } from './usage-error.js';
import { cliVersion } from './version.js';

/**
 * Runs the `lockkit` command line `args` (without `node` and the script) and resolves to
 * the exit status. Never rejects: every failure is reported on `output` and mapped to one of
 * `exitCodes`.
 */
export async function main(
  args: readonly string[],
  output: Output = processOutput,
): Promise<number> {
  let invocation: Invocation | undefined;
  try {
    invocation = parseCommandLine(args);
    switch (invocation.command) {
      case 'help':
        output.print(helpText(invocation.topic).trimEnd());
        return exitCodes.ok;
      case 'version':
        output.print(cliVersion());
        return exitCodes.ok;
      case 'run':
        return await runCommand(invocation, output);
      case 'inspect':
        return await inspectCommand(invocation, output);
      case 'demo':
        return await demoCommand(invocation, output);
    }
  } catch (error) {
    return report(error, invocation, args, output);
  }
}

function report(
  error: unknown,
  invocation: Invocation | undefined,
  args: readonly string[],
  output: Output,
): number {
  if (error instanceof UsageError || InvalidArgumentError.isInstance(error)) {
    const command = invocation?.command ?? args[0];
    const topic =
      command === 'run' || command === 'inspect' || command === 'demo' ? ` ${command}` : '';
    output.say(`${error.message}\nRun 'lockkit help${topic}' for usage.`);
    return exitCodes.usage;
  }
  if (LockTimeoutError.isInstance(error)) {
    output.say(
      error.timeoutMs === 0
        ? `${JSON.stringify(error.lockName)} is held elsewhere; not waiting (--timeout 0)`
        : `timed out after ${error.timeoutMs} ms waiting for ${JSON.stringify(error.lockName)}`,
    );
    return exitCodes.timeout;
  }
  if (BackendNotInstalledError.isInstance(error)) {
    output.say(error.message);
    return exitCodes.unavailable;
  }
  if (BackendUnavailableError.isInstance(error)) {
    const cause =
      error.cause instanceof Error && !error.message.includes(error.cause.message)
        ? ` (${error.cause.message})`
        : '';
    output.say(`backend unavailable: ${error.message}${cause}`);
    return exitCodes.unavailable;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  output.say(`internal error: ${detail}`);
  return exitCodes.internal;
}
