import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childCommand, lockkit } from './lockkit-process.js';

describe('lockkit: help, version and usage errors', () => {
  it('--help gives the overview; help run lists every exit status', async () => {
    const overview = await lockkit('--help');
    expect(overview.code).toBe(0);
    expect(overview.stdout).toContain('lockkit run <url> <name> [options] -- <command> [args…]');
    expect(overview.stdout).toContain('redis://h1:6379,h2:6379,h3:6379');
    const run = await lockkit('help', 'run');
    for (const status of ['128+n', '64', '69', '70', '75', '76', '126, 127']) {
      expect(run.stdout).toContain(`  ${status} `);
    }
    expect((await lockkit('run', '--help')).stdout).toBe(run.stdout);
    expect((await lockkit('inspect', '-h')).stdout).toContain('lockkit inspect <url> <name>');
    expect((await lockkit('help', 'demo')).stdout).toContain('lockkit demo [url]');
  });

  it('--version prints the package version', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const result = await lockkit('--version');
    expect(result).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
  });

  it.each([
    [['frob'], /Unknown command "frob"/],
    [['run'], /needs a lock URL, a lock name, "--" and the command/],
    [['run', 'memory:', 'x', 'ls'], /needs a lock URL, a lock name, "--"/],
    [['run', 'memory:', '--', 'true'], /needs a lock URL and a lock name/],
    [['run', 'memory:', 'x', '--'], /no command after "--"/],
    [['run', 'memory:', 'x', '--tmeout', '5', '--', 'true'], /Unknown option '--tmeout'/],
    [['run', 'memory:', 'x', '--timeout', 'soon', '--', 'true'], /--timeout takes a duration/],
    [['run', 'memory:', 'x', '--semaphore', '0', '--', 'true'], /positive whole number/],
    [['run', 'memory:', 'x', '-s', '-x', '--', 'true'], /Choose one of/],
    [['run', 'etcd://h', 'x', '--', 'true'], /Unknown lock URL scheme "etcd:"/],
    [['run', 'file:///tmp/x?leaseMs=5', 'x', '--', 'true'], /leaseMs must be an integer/],
    [['inspect', 'memory:'], /needs a lock URL and a lock name/],
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

  it('runs on the in-memory backend too (one process)', async () => {
    const result = await lockkit('run', 'memory:', 'x', ...childCommand('exit=7'));
    expect(result.code).toBe(7);
    expect(result.stdout).toContain('"backend":"memory"');
  });
});
