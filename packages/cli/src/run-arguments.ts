import { parseDuration } from './durations.js';
import { exitCodes } from './exit-codes.js';
import type { Environment, RunCommand } from './invocation.js';
import { checkUrlFileOption, lockUrlFrom } from './lock-url-source.js';
import {
  type Options,
  parse,
  stringValue,
  target,
  targetOptions,
  urlAndName,
  urlFileOption,
  type Values,
} from './option-parsing.js';
import { UsageError } from './usage-error.js';

/** The shell `-c` runs its command string with. */
export const shell = '/bin/sh';

const runOptions = {
  ...targetOptions,
  ...urlFileOption,
  timeout: { type: 'string', short: 't' },
  wait: { type: 'string', short: 'w' },
  nonblock: { type: 'boolean', short: 'n' },
  command: { type: 'string', short: 'c' },
  'conflict-exit-code': { type: 'string', short: 'E' },
  'kill-after': { type: 'string', short: 'k' },
  verbose: { type: 'boolean' },
} satisfies Options;

/**
 * Parses the arguments of `lockkit run`. Every option is checked before the only I/O (reading
 * `--url-file`).
 */
export function parseRun(args: readonly string[], environment: Environment): RunCommand {
  const terminator = args.indexOf('--');
  const options = terminator < 0 ? args : args.slice(0, terminator);
  const { values, positionals } = parse(options, runOptions);
  const argv = commandOf(values, terminator < 0 ? undefined : args.slice(terminator + 1));
  const timeoutMs = timeoutOf(values);
  const conflictExitCode = conflictExitCodeOf(stringValue(values, 'conflict-exit-code'));
  const killAfter = stringValue(values, 'kill-after');
  const killAfterMs = killAfter === undefined ? 10_000 : parseDuration('--kill-after', killAfter);
  const lockTarget = target(values);
  const urlFile = stringValue(values, 'url-file');
  checkUrlFileOption(urlFile);
  const { url, name } = urlAndName('run', positionals);
  return {
    command: 'run',
    url: lockUrlFrom('run', { argument: url, urlFile }, environment),
    name,
    target: lockTarget,
    timeoutMs,
    conflictExitCode,
    killAfterMs,
    verbose: values['verbose'] === true,
    argv,
  };
}

/** The command of `run` or `elect`: the words after `--`, or `-c <string>` run by {@link shell}. */
export function commandOf(
  values: Values,
  afterTerminator: readonly string[] | undefined,
  command: 'run' | 'elect' = 'run',
): readonly [string, ...string[]] {
  const commandString = stringValue(values, 'command');
  if (commandString !== undefined) {
    if (afterTerminator !== undefined) {
      throw new UsageError('Give the command either with -c "<command>" or after "--", not both');
    }
    if (commandString.trim() === '') throw new UsageError('-c takes a command string');
    return [shell, '-c', commandString];
  }
  if (afterTerminator === undefined) {
    const what = command === 'run' ? 'a lock name' : 'an election name';
    throw new UsageError(
      `lockkit ${command} needs a lock URL, ${what} and the command: lockkit ${command} <url> <name> [options] -- <command…> (or -c "<command>")`,
    );
  }
  const [program, ...programArgs] = afterTerminator;
  if (program === undefined || program === '') {
    throw new UsageError(`lockkit ${command}: no command after "--"`);
  }
  return [program, ...programArgs];
}

/** ms to wait: `--timeout <duration>`, `--wait <seconds>`, `--nonblock` (0) or forever. */
function timeoutOf(values: Values): number {
  const timeout = stringValue(values, 'timeout');
  const wait = stringValue(values, 'wait');
  const nonblock = values['nonblock'] === true;
  if ([timeout !== undefined, wait !== undefined, nonblock].filter(Boolean).length > 1) {
    throw new UsageError('Choose one of --timeout, --wait and --nonblock');
  }
  if (nonblock) return 0;
  if (wait !== undefined) return waitSeconds(wait);
  if (timeout !== undefined) return parseDuration('--timeout', timeout, true);
  return Number.POSITIVE_INFINITY;
}

/** `--wait <seconds>` as flock(1) takes it: a number of seconds, fractions allowed. */
function waitSeconds(text: string): number {
  const seconds = /^(\d+(\.\d*)?|\.\d+)$/.test(text.trim()) ? Number(text) : Number.NaN;
  const ms = Math.round(seconds * 1000);
  if (!Number.isFinite(ms) || ms > 2_147_483_647) {
    throw new UsageError(
      `--wait takes a number of seconds, 0 or more (such as 10 or 0.5; at most 2147483), got "${text}"`,
    );
  }
  return ms;
}

/** `--conflict-exit-code <n>`: a whole number from 0 to 255. */
function conflictExitCodeOf(text: string | undefined): number {
  if (text === undefined) return exitCodes.timeout;
  const code = /^\d{1,3}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(code >= 0 && code <= 255)) {
    throw new UsageError(`--conflict-exit-code takes a whole number from 0 to 255, got "${text}"`);
  }
  return code;
}
