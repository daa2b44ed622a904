import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { schemes } from 'lockkit';
import { afterAll, describe, expect, it } from 'vitest';
import { lockUrlSchemes } from '../src/option-parsing.js';
import { childCommand, lockkitWith } from './lockkit-process.js';

// Where `lockkit run` and `inspect` take the lock URL from: the argument, --url-file, LOCKKIT_URL.

const scratch = mkdtempSync(join(tmpdir(), 'lockkit-url-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const lockDirectory = (label: string): string => pathToFileURL(join(scratch, label)).href;
const readyOf = (stdout: string) => JSON.parse(/ready (\{.*\})/.exec(stdout)?.[1] ?? '{}');

function urlFile(label: string, content: string): string {
  const path = join(scratch, `${label}.url`);
  writeFileSync(path, content);
  return path;
}

describe('the lock URL', () => {
  it('comes from LOCKKIT_URL when only the lock name is given', async () => {
    const result = await lockkitWith(
      { LOCKKIT_URL: lockDirectory('env') },
      'run',
      'job',
      ...childCommand('exit=0'),
    );
    expect(result.code).toBe(0);
    expect(readyOf(result.stdout)).toMatchObject({ backend: 'file', name: 'job', token: '1' });
    const inspected = await lockkitWith({ LOCKKIT_URL: lockDirectory('env') }, 'inspect', 'job');
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain(
      `lock "job" on ${lockDirectory('env')} (file backend): free`,
    );
  });

  it('comes from --url-file (its trailing newline dropped), which wins over LOCKKIT_URL', async () => {
    const path = urlFile('plain', `${lockDirectory('from-file')}\n`);
    const result = await lockkitWith(
      { LOCKKIT_URL: 'memory:' },
      'run',
      'job',
      '--url-file',
      path,
      ...childCommand('exit=0'),
    );
    expect(result.code).toBe(0);
    expect(readyOf(result.stdout)).toMatchObject({ backend: 'file' });
    const inspected = await lockkitWith({}, 'inspect', '--url-file', path, 'job', '--json');
    expect(JSON.parse(inspected.stdout)).toMatchObject({
      url: lockDirectory('from-file'),
      backend: 'file',
      held: false,
    });
  });

  it('the argument wins over --url-file and LOCKKIT_URL', async () => {
    const path = urlFile('ignored', lockDirectory('ignored'));
    const result = await lockkitWith(
      { LOCKKIT_URL: lockDirectory('ignored') },
      'run',
      'memory:',
      'job',
      '--url-file',
      path,
      ...childCommand('exit=0'),
    );
    expect(result.code).toBe(0);
    expect(readyOf(result.stdout)).toMatchObject({ backend: 'memory' });
  });

  it('a password from the file or the environment is not echoed in messages', async () => {
    const result = await lockkitWith(
      { LOCKKIT_URL: 'postgres://app:hunter2@127.0.0.1:1/app' },
      'inspect',
      'job',
    );
    expect(result.code).toBe(69);
    expect(result.stderr).not.toContain('hunter2');
  });

  it.each([
    ['a missing file', () => join(scratch, 'none.url'), /--url-file .*none\.url: no such file/],
    ['a directory', () => scratch, /--url-file .*: it is a directory/],
    ['an empty file', () => urlFile('empty', '\n'), /--url-file .*empty\.url is empty/],
    [
      'two lines',
      () => urlFile('two', 'memory:\nmemory:\n'),
      /holds more than the lock URL: put only the URL in it, on one line/,
    ],
  ])(
    '--url-file with %s: exit 66, one clear line, the command does not run',
    async (_, path, message) => {
      for (const command of [
        ['run', 'job', '--url-file', path(), ...childCommand()],
        ['inspect', 'job', '--url-file', path()],
      ]) {
        const result = await lockkitWith({ LOCKKIT_URL: 'memory:' }, ...command);
        expect(result.code).toBe(66);
        expect(result.stderr).toMatch(message);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stdout).toBe('');
      }
    },
  );

  it('bad options are reported before the file is read', async () => {
    const result = await lockkitWith(
      {},
      'run',
      'job',
      '--url-file',
      join(scratch, 'none.url'),
      '-w',
      'soon',
      '-c',
      'true',
    );
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--wait takes a number of seconds');
  });

  it('an empty LOCKKIT_URL counts as none', async () => {
    const result = await lockkitWith({ LOCKKIT_URL: ' ' }, 'run', 'job', '-c', 'true');
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('needs a lock URL');
  });

  it('the schemes that mark a lone argument as a URL are lockkit’s own', () => {
    expect([...lockUrlSchemes].sort()).toEqual(Object.keys(schemes).sort());
  });
});
