import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childCommand, lockkit } from './lockkit-process.js';

describe('lockkit: help, version and usage errors', () => {
  it('--help gives the overview; help run lists every exit status', async () => {
    const overview = await lockkit('--help');
    expect(overview.code).toBe(0);
    expect(overview.stdout).toContain('lockkit run [<url>] <name> [options] -- <command> [args…]');
    expect(overview.stdout).toContain('LOCKKIT_URL');
    expect(overview.stdout).toContain('redis://h1:6379,h2:6379,h3:6379');
    const run = await lockkit('help', 'run');
    for (const status of ['128+n', '64', '66', '69', '70', '75', '76', '126, 127']) {
      expect(run.stdout).toContain(`  ${status} `);
    }
    expect((await lockkit('run', '--help')).stdout).toBe(run.stdout);
    expect((await lockkit('inspect', '-h')).stdout).toContain('lockkit inspect [<url>] <name>');
    const elect = await lockkit('help', 'elect');
    for (const status of ['128+n', '64', '66', '69', '70', '76', '126, 127']) {
      expect(elect.stdout).toContain(`  ${status} `);
    }
    expect(elect.stdout).toContain('LOCKKIT_EPOCH');
    expect((await lockkit('elect', '--help')).stdout).toBe(elect.stdout);
    expect(overview.stdout).toContain('lockkit elect [<url>] <name> [options] -- <command>');
    expect((await lockkit('help', 'demo')).stdout).toContain('lockkit demo [url]');
  });

  it('--version prints the package version', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const result = await lockkit('--version');
    expect(result).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
  });

  it.each([
    [['frob'], /Unknown command "frob"/],
    [['run'], /needs a lock URL, a lock name and the command/],
    [['run', 'memory:', 'x', 'ls'], /needs a lock URL, a lock name and the command/],
    [['run', 'memory:', '--', 'true'], /needs a lock name after the lock URL/],
    [['run', 'x', '--', 'true'], /needs a lock URL: give it before the lock name, with --url-file/],
    [['run', '--', 'true'], /needs a lock name/],
    [['run', 'memory:', 'x', '--'], /no command after "--"/],
    [['run', 'memory:', 'x', '--tmeout', '5', '--', 'true'], /Unknown option '--tmeout'/],
    [['run', 'memory:', 'x', '--timeout', 'soon', '--', 'true'], /--timeout takes a duration/],
    [['run', 'memory:', 'x', '--semaphore', '0', '--', 'true'], /positive whole number/],
    [['run', 'memory:', 'x', '-s', '-x', '--', 'true'], /Choose one of/],
    [
      ['run', 'memory:', 'x', '-w', '-1', '--', 'true'],
      /--wait takes a number of seconds, 0 or more/,
    ],
    [['run', 'memory:', 'x', '--wait=1s', '--', 'true'], /--wait takes a number of seconds/],
    [['run', 'memory:', 'x', '-n', '-w', '1', '--', 'true'], /Choose one of --timeout, --wait/],
    [['run', 'memory:', 'x', '-n', '-t', '1s', '--', 'true'], /Choose one of --timeout, --wait/],
    [['run', 'memory:', 'x', '-E', '256', '--', 'true'], /from 0 to 255, got "256"/],
    [['run', 'memory:', 'x', '-E', '-1', '--', 'true'], /from 0 to 255, got "-1"/],
    [['run', 'memory:', 'x', '-E', '2.5', '--', 'true'], /from 0 to 255, got "2.5"/],
    [
      ['run', 'memory:', 'x', '-c', 'true', '--', 'true'],
      /either with -c "<command>" or after "--"/,
    ],
    [['run', 'memory:', 'x', '-c', ' '], /-c takes a command string/],
    [
      ['run', 'memory:', 'x', '--url-file', '', '-c', 'true'],
      /--url-file takes the name of a file/,
    ],
    [['run', 'consul://h', 'x', '--', 'true'], /Unknown lock URL scheme "consul:"/],
    [['run', 'file:///tmp/x?leaseMs=5', 'x', '--', 'true'], /leaseMs must be an integer/],
    [['elect'], /needs a lock URL, an election name and the command/],
    [['elect', 'memory:', 'x', '--'], /lockkit elect: no command after "--"/],
    [['elect', 'memory:', 'x', 'ls'], /needs a lock URL, an election name and the command/],
    [['elect', 'memory:', 'x', '-t', '1', '--', 'true'], /Unknown option '-t'/],
    [['elect', 'memory:', 'x', '-k', 'soon', '--', 'true'], /--kill-after takes a duration/],
    [['elect', 'memory:', 'x', '--owner', ' ', '--', 'true'], /--owner takes a label/],
    [['elect', 'x', '--', 'true'], /lockkit elect needs a lock URL/],
    [['inspect', 'memory:'], /needs a lock name after the lock URL/],
    [['inspect', 'x'], /needs a lock URL/],
    [['inspect', 'consul://h', 'x'], /Unknown lock URL scheme "consul:"/],
    [['inspect', 'postgres://h/db?idleTimeoutMs=x', 'x'], /"idleTimeoutMs" must be a number/],
  ])('%j → 64', async (args, message) => {
    const result = await lockkit(...args);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain("Run 'lockkit help");
  });

  it('an unreachable server is 69 (backend unavailable), with the password hidden', async () => {
    const result = await lockkit(
      'run',
      'postgres://app:hunter2@127.0.0.1:1/app',
      'x',
      ...childCommand(),
    );
    expect(result.code).toBe(69);
    expect(result.stderr).toContain('backend unavailable');
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stdout).not.toContain('ready');
  });

  it('elect on an unreachable server at start is 69, the command never runs', async () => {
    const result = await lockkit(
      'elect',
      'postgres://app:hunter2@127.0.0.1:1/app',
      'x',
      ...childCommand(),
    );
    expect(result.code).toBe(69);
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stdout).not.toContain('ready');
  });

  it('runs on the in-memory backend too (one process)', async () => {
    const result = await lockkit('run', 'memory:', 'x', ...childCommand('exit=7'));
    expect(result.code).toBe(7);
    expect(result.stdout).toContain('"backend":"memory"');
  });

  it.each([
    ['PostgreSQL', 'postgres://app:hunter2@127.0.0.1:1/app'],
    ['Redis', 'redis://:hunter2@127.0.0.1:1'],
  ])(
    'inspect on an unreachable %s: 69, one line naming the address, no stack trace',
    async (server, url) => {
      const result = await lockkit('inspect', url, 'x');
      expect(result.code).toBe(69);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        new RegExp(
          `^lockkit: backend unavailable: [^\n]*${server}[^\n]*127\\.0\\.0\\.1:1[^\n]*\n$`,
        ),
      );
      expect(result.stderr).not.toContain('hunter2');
    },
  );

  it('demo on an unreachable server: 69 in one line, no worker started', async () => {
    const result = await lockkit('demo', 'postgres://app:hunter2@127.0.0.1:1/app');
    expect(result.code).toBe(69);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^lockkit: backend unavailable: .*ECONNREFUSED 127\.0\.0\.1:1.*\n$/,
    );
    expect(result.stderr).not.toContain('hunter2');
  });

  it('--help and usage errors do not load lockkit or a backend', () => {
    // Follow the static imports of the built binary: none may reach a package; the commands
    // are imported dynamically, when they run.
    const seen = new Set<string>();
    const packages: string[] = [];
    const visit = (url: URL): void => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      const code = readFileSync(url, 'utf8');
      for (const [, specifier = ''] of code.matchAll(/^import [^;]*?from '([^']+)';/gms)) {
        if (specifier.startsWith('.')) visit(new URL(specifier, url));
        else if (!specifier.startsWith('node:')) packages.push(specifier);
      }
    };
    visit(new URL('../dist/bin.js', import.meta.url));
    expect(packages).toEqual([]);
    expect([...seen].some((url) => url.endsWith('/cli-arguments.js'))).toBe(true);
    expect([...seen].some((url) => url.includes('/commands/'))).toBe(false);
  });
});
