import { parseDuration } from './durations.js';
import type { ElectCommand, Environment } from './invocation.js';
import { checkUrlFileOption, lockUrlFrom } from './lock-url-source.js';
import { type Options, parse, stringValue, urlAndName, urlFileOption } from './option-parsing.js';
import { commandOf } from './run-arguments.js';
import { UsageError } from './usage-error.js';

const electOptions = {
  ...urlFileOption,
  command: { type: 'string', short: 'c' },
  'kill-after': { type: 'string', short: 'k' },
  owner: { type: 'string' },
  once: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} satisfies Options;

/**
 * Parses the arguments of `lockkit elect`. Every option is checked before the only I/O
 * (reading `--url-file`).
 */
export function parseElect(args: readonly string[], environment: Environment): ElectCommand {
  const terminator = args.indexOf('--');
  const options = terminator < 0 ? args : args.slice(0, terminator);
  const { values, positionals } = parse(options, electOptions);
  const argv = commandOf(values, terminator < 0 ? undefined : args.slice(terminator + 1), 'elect');
  const killAfter = stringValue(values, 'kill-after');
  const killAfterMs = killAfter === undefined ? 10_000 : parseDuration('--kill-after', killAfter);
  const owner = stringValue(values, 'owner');
  if (owner !== undefined && owner.trim() === '') {
    throw new UsageError('--owner takes a label (such as the host name)');
  }
  const urlFile = stringValue(values, 'url-file');
  checkUrlFileOption(urlFile);
  const { url, name } = urlAndName('elect', positionals);
  return {
    command: 'elect',
    url: lockUrlFrom('elect', { argument: url, urlFile }, environment),
    name,
    owner,
    killAfterMs,
    once: values['once'] === true,
    verbose: values['verbose'] === true,
    argv,
  };
}
