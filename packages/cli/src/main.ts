import { parseCommandLine } from './cli-arguments.js';
import { exitCodes } from './exit-codes.js';
import type { Failure } from './failure.js';
import { helpText } from './help-text.js';
import type { Environment, Invocation } from './invocation.js';
import { type Output, processOutput } from './output.js';
import { UrlFileError } from './url-file-error.js';
import { UsageError } from './usage-error.js';
import { cliVersion } from './version.js';

// Only what every command line needs is imported up front: help, --version and usage errors
// never load lockkit; a command loads its own module, and that module the backend it uses.

/**
 * Runs the `lockkit` command line `args` (without `node` and the script) and resolves to
 * the exit status. Never rejects: every failure is reported on `output` in one line (the
 * stack trace of an internal error only with `LOCKKIT_DEBUG=1`) and mapped to one of
 * `exitCodes`. The lock URL may come from `environment.LOCKKIT_URL`.
 */
export async function main(
  args: readonly string[],
  output: Output = processOutput,
  environment: Environment = process.env,
): Promise<number> {
  let invocation: Invocation | undefined;
  try {
    invocation = parseCommandLine(args, environment);
    switch (invocation.command) {
      case 'help':
        output.print(helpText(invocation.topic).trimEnd());
        return exitCodes.ok;
      case 'version':
        output.print(cliVersion());
        return exitCodes.ok;
      case 'run': {
        const { runCommand } = await import('./commands/run-command.js');
        return await runCommand(invocation, output);
      }
      case 'elect': {
        const { electCommand } = await import('./commands/elect-command.js');
        return await electCommand(invocation, output);
      }
      case 'inspect': {
        const { inspectCommand } = await import('./commands/inspect-command.js');
        return await inspectCommand(invocation, output);
      }
      case 'force-release': {
        const { forceReleaseCommand } = await import('./commands/inspect-command.js');
        return await forceReleaseCommand(invocation, output);
      }
      case 'demo': {
        const { demoCommand } = await import('./commands/demo-command.js');
        return await demoCommand(invocation, output);
      }
    }
  } catch (error) {
    const command = invocation?.command ?? args[0];
    return await report(error, command, output, environment);
  }
}

async function report(
  error: unknown,
  command: string | undefined,
  output: Output,
  environment: Environment,
): Promise<number> {
  if (error instanceof UrlFileError) {
    output.say(error.message);
    return exitCodes.noInput;
  }
  let failure: Failure;
  if (error instanceof UsageError) {
    failure = { exitCode: exitCodes.usage, message: error.message };
  } else {
    // Any other error comes from a command, which has loaded lockkit already.
    const { failureOf } = await import('./failure.js');
    failure = failureOf(error);
  }
  if (failure.exitCode === exitCodes.usage) {
    const topic =
      command !== undefined &&
      ['run', 'elect', 'inspect', 'force-release', 'demo'].includes(command)
        ? ` ${command}`
        : '';
    output.say(`${failure.message}\nRun 'lockkit help${topic}' for usage.`);
    return exitCodes.usage;
  }
  output.say(failure.message);
  if (failure.exitCode === exitCodes.internal && environment['LOCKKIT_DEBUG']) {
    output.say(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  return failure.exitCode;
}
