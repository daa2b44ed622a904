import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { LockTarget } from './invocation.js';
import { UsageError } from './usage-error.js';

/** Option definitions, as `node:util` `parseArgs` takes them. */
export type Options = NonNullable<ParseArgsConfig['options']>;

/** Parsed option values, as `node:util` `parseArgs` gives them. */
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** The options that choose the primitive, and `--help`. */
export const targetOptions: Options = {
  shared: { type: 'boolean', short: 's' },
  exclusive: { type: 'boolean', short: 'x' },
  semaphore: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/** `--url-file <file>`: where run and inspect may read the lock URL from. */
export const urlFileOption: Options = {
  'url-file': { type: 'string' },
};

/**
 * The URL schemes lockkit knows (as `lockkit`'s `schemes`; a test keeps the two equal). Listed
 * here so that parsing a command line does not load lockkit.
 */
export const lockUrlSchemes: readonly string[] = [
  'memory',
  'file',
  'redis',
  'rediss',
  'redis+cluster',
  'redis+sentinel',
  'postgres',
  'postgresql',
  'mysql',
  'mariadb',
  'zookeeper',
  'zk',
  'etcd',
  'etcds',
];

/** Parses `args` strictly; every problem becomes a {@link UsageError}. */
export function parse(
  args: readonly string[],
  options: Options,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: joinNegativeValues(args, options),
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

/**
 * `-w -1` → `--wait=-1`: parseArgs refuses a value that starts with a dash as ambiguous; a
 * negative number is meant as the value, and the option's own check then explains the range.
 */
function joinNegativeValues(args: readonly string[], options: Options): string[] {
  const takesValue = new Map<string, string>();
  for (const [long, option] of Object.entries(options)) {
    if (option.type !== 'string') continue;
    takesValue.set(`--${long}`, long);
    if (option.short !== undefined) takesValue.set(`-${option.short}`, long);
  }
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    const next = args[index + 1];
    const long = takesValue.get(arg);
    if (long !== undefined && next !== undefined && /^-\d/.test(next)) {
      joined.push(`--${long}=${next}`);
      index += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/**
 * The lock URL (when given on the command line) and the lock name: `<url> <name>`, or just
 * `<name>` when `--url-file` or `LOCKKIT_URL` gives the URL.
 */
export function urlAndName(
  command: string,
  positionals: readonly string[],
): { readonly url: string | undefined; readonly name: string } {
  const [first, second, ...extra] = positionals;
  if (first === undefined) {
    throw new UsageError(
      `lockkit ${command} needs a lock name (after the lock URL, unless --url-file or LOCKKIT_URL gives the URL)`,
    );
  }
  if (extra.length > 0) {
    throw new UsageError(
      command === 'run' || command === 'elect'
        ? `Unexpected "${extra[0]}": put the command after "--" (or give it with -c)`
        : `Unexpected argument "${extra[0]}"`,
    );
  }
  if (second !== undefined) return { url: first, name: second };
  if (looksLikeLockUrl(first)) {
    throw new UsageError(`lockkit ${command} needs a lock name after the lock URL`);
  }
  return { url: undefined, name: first };
}

function looksLikeLockUrl(text: string): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  return scheme !== undefined && lockUrlSchemes.includes(scheme);
}

/** The primitive `--shared`, `--exclusive` or `--semaphore <n>` choose (default: the mutex). */
export function target(values: Values): LockTarget {
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

/** The value of string option `name`, if given. */
export function stringValue(values: Values, name: string): string | undefined {
  const value = values[name];
  return value === undefined ? undefined : String(value);
}
