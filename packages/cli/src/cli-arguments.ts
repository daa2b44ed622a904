import { parseElect } from './elect-arguments.js';
import type {
  CommandName,
  DemoCommand,
  Environment,
  ForceReleaseCommand,
  InspectCommand,
  Invocation,
} from './invocation.js';
import { checkUrlFileOption, lockUrlFrom } from './lock-url-source.js';
import {
  parse,
  stringValue,
  target,
  targetOptions,
  urlAndName,
  urlFileOption,
} from './option-parsing.js';
import { parseRun } from './run-arguments.js';
import { UsageError } from './usage-error.js';

export type {
  CommandName,
  DemoCommand,
  ElectCommand,
  Environment,
  ForceReleaseCommand,
  InspectCommand,
  Invocation,
  LockTarget,
  RunCommand,
} from './invocation.js';

const commandNames: readonly CommandName[] = ['run', 'elect', 'inspect', 'force-release', 'demo'];

/**
 * Parses `process.argv.slice(2)`; throws {@link UsageError} for anything it cannot use. The
 * lock URL of run, elect and inspect may come from `--url-file` (read here, after every other check:
 * a `UrlFileError` if it cannot be) or from `environment.LOCKKIT_URL`.
 */
export function parseCommandLine(
  args: readonly string[],
  environment: Environment = process.env,
): Invocation {
  const [first, ...rest] = args;
  if (first === undefined || first === '--help' || first === '-h') {
    return { command: 'help', topic: undefined };
  }
  if (first === '--version' || first === '-V') return { command: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic !== undefined && !isCommandName(topic)) {
      throw new UsageError(`No help for "${topic}": the commands are ${commandNames.join(', ')}`);
    }
    return { command: 'help', topic };
  }
  if (!isCommandName(first)) {
    throw new UsageError(
      first.startsWith('-')
        ? `Unknown option "${first}" (before the command)`
        : `Unknown command "${first}": the commands are ${commandNames.join(', ')}`,
    );
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    const terminator = rest.indexOf('--');
    const helpAt = Math.max(rest.indexOf('--help'), rest.indexOf('-h'));
    if (terminator < 0 || helpAt < terminator) return { command: 'help', topic: first };
  }
  if (first === 'run') return parseRun(rest, environment);
  if (first === 'elect') return parseElect(rest, environment);
  if (first === 'inspect') return parseInspect(rest, environment);
  if (first === 'force-release') return parseForceRelease(rest, environment);
  return parseDemo(rest);
}

function isCommandName(value: string): value is CommandName {
  return (commandNames as readonly string[]).includes(value);
}

function parseInspect(args: readonly string[], environment: Environment): InspectCommand {
  const { values, positionals } = parse(args, {
    ...targetOptions,
    ...urlFileOption,
    json: { type: 'boolean' },
  });
  const lockTarget = target(values);
  const urlFile = stringValue(values, 'url-file');
  checkUrlFileOption(urlFile);
  const { url, name } = urlAndName('inspect', positionals);
  return {
    command: 'inspect',
    url: lockUrlFrom('inspect', { argument: url, urlFile }, environment),
    name,
    target: lockTarget,
    json: values['json'] === true,
  };
}

function parseForceRelease(args: readonly string[], environment: Environment): ForceReleaseCommand {
  const { values, positionals } = parse(args, {
    ...targetOptions,
    ...urlFileOption,
    json: { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
  });
  const lockTarget = target(values);
  const urlFile = stringValue(values, 'url-file');
  checkUrlFileOption(urlFile);
  const { url, name } = urlAndName('force-release', positionals);
  return {
    command: 'force-release',
    url: lockUrlFrom('force-release', { argument: url, urlFile }, environment),
    name,
    target: lockTarget,
    yes: values['yes'] === true,
    json: values['json'] === true,
  };
}

function parseDemo(args: readonly string[]): DemoCommand {
  const { positionals } = parse(args, { help: { type: 'boolean', short: 'h' } });
  if (positionals.length > 1) {
    throw new UsageError(`lockkit demo takes at most one URL, got: ${positionals.join(' ')}`);
  }
  return { command: 'demo', url: positionals[0] };
}
