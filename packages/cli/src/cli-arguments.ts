import { type ParseArgsConfig, parseArgs } from 'node:util';
import { parseDuration } from './durations.js';
import { UsageError } from './usage-error.js';

/** Which primitive a command takes or inspects. */
export type LockTarget =
  | { readonly kind: 'mutex' }
  | { readonly kind: 'read' }
  | { readonly kind: 'write' }
  | { readonly kind: 'semaphore'; readonly maxCount: number };

/** The sub-commands. */
export type CommandName = 'run' | 'inspect' | 'demo';

/** `lockkit run`. */
export interface RunCommand {
  readonly command: 'run';
  readonly url: string;
  readonly name: string;
  readonly target: LockTarget;
  /** ms to wait for the lock (`Infinity`: forever). */
  readonly timeoutMs: number;
  /** ms between SIGTERM and SIGKILL when the lock is lost. */
  readonly killAfterMs: number;
  readonly verbose: boolean;
  /** The command and its arguments (everything after `--`). */
  readonly argv: readonly [string, ...string[]];
}

/** `lockkit inspect`. */
export interface InspectCommand {
  readonly command: 'inspect';
  readonly url: string;
  readonly name: string;
  readonly target: LockTarget;
  readonly json: boolean;
}

/** `lockkit demo`. */
export interface DemoCommand {
  readonly command: 'demo';
  readonly url: string | undefined;
}

/** What the command line asks for. */
export type Invocation =
  | { readonly command: 'help'; readonly topic: CommandName | undefined }
  | { readonly command: 'version' }
  | RunCommand
  | InspectCommand
  | DemoCommand;

const commandNames: readonly CommandName[] = ['run', 'inspect', 'demo'];

const targetOptions = {
  shared: { type: 'boolean', short: 's' },
  exclusive: { type: 'boolean', short: 'x' },
  semaphore: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** Parses `process.argv.slice(2)`; throws {@link UsageError} for anything it cannot use. */
export function parseCommandLine(args: readonly string[]): Invocation {
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
  if (first === 'run') return parseRun(rest);
  if (first === 'inspect') return parseInspect(rest);
  return parseDemo(rest);
}

function isCommandName(value: string): value is CommandName {
  return (commandNames as readonly string[]).includes(value);
}

function parseRun(args: readonly string[]): RunCommand {
  const terminator = args.indexOf('--');
  if (terminator < 0) {
    throw new UsageError(
      'lockkit run needs a lock URL, a lock name, "--" and the command: lockkit run <url> <name> [options] -- <command…>',
    );
  }
  const command = args.slice(terminator + 1);
  const { values, positionals } = parse(args.slice(0, terminator), {
    ...targetOptions,
    timeout: { type: 'string', short: 't' },
    'kill-after': { type: 'string', short: 'k' },
    verbose: { type: 'boolean' },
  });
  const [url, name] = twoPositionals('run', positionals);
  const [program, ...programArgs] = command;
  if (program === undefined || program === '') {
    throw new UsageError('lockkit run: no command after "--"');
  }
  return {
    command: 'run',
    url,
    name,
    target: target(values),
    timeoutMs:
      values['timeout'] === undefined
        ? Number.POSITIVE_INFINITY
        : parseDuration('--timeout', String(values['timeout']), true),
    killAfterMs:
      values['kill-after'] === undefined
        ? 10_000
        : parseDuration('--kill-after', String(values['kill-after'])),
    verbose: values['verbose'] === true,
    argv: [program, ...programArgs],
  };
}

function parseInspect(args: readonly string[]): InspectCommand {
  const { values, positionals } = parse(args, { ...targetOptions, json: { type: 'boolean' } });
  const [url, name] = twoPositionals('inspect', positionals);
  return { command: 'inspect', url, name, target: target(values), json: values['json'] === true };
}

function parseDemo(args: readonly string[]): DemoCommand {
  const { positionals } = parse(args, { help: { type: 'boolean', short: 'h' } });
  if (positionals.length > 1) {
    throw new UsageError(`lockkit demo takes at most one URL, got: ${positionals.join(' ')}`);
  }
  return { command: 'demo', url: positionals[0] };
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function parse(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Values, positionals };
  } catch (error) {
    // parseArgs explains well ("Unknown option '--tmeout'"); drop its generic advice.
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

function twoPositionals(command: string, positionals: readonly string[]): [string, string] {
  const [url, name, ...extra] = positionals;
  if (url === undefined || name === undefined) {
    throw new UsageError(`lockkit ${command} needs a lock URL and a lock name`);
  }
  if (extra.length > 0) {
    throw new UsageError(
      command === 'run'
        ? `Unexpected "${extra[0]}": put the command after "--"`
        : `Unexpected argument "${extra[0]}"`,
    );
  }
  return [url, name];
}

function target(values: Values): LockTarget {
  const shared = values['shared'] === true;
  const exclusive = values['exclusive'] === true;
  const semaphore = values['semaphore'];
  const chosen = [shared, exclusive, semaphore !== undefined].filter(Boolean).length;
  if (chosen > 1) {
    throw new UsageError('Choose one of --shared, --exclusive and --semaphore <count>');
  }
  if (shared) return { kind: 'read' };
  if (exclusive) return { kind: 'write' };
  if (semaphore !== undefined) {
    const text = String(semaphore);
    const maxCount = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(maxCount) || maxCount < 1 || maxCount > 2_147_483_647) {
      throw new UsageError(`--semaphore takes a positive whole number of permits, got "${text}"`);
    }
    return { kind: 'semaphore', maxCount };
  }
  return { kind: 'mutex' };
}
