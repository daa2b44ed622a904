import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit } from './lockkit-process.js';

// flock(1)'s options on `lockkit run`: -n, -w, -c, -E, against the file backend.

const directory = mkdtempSync(join(tmpdir(), 'lockkit-flock-'));
const url = pathToFileURL(directory).href;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Holds `name` in a lockkit process until `finish()`. */
async function holding(name: string): Promise<LockkitProcess> {
  const holder = new LockkitProcess(['run', url, name, ...childCommand()]);
  await holder.ready();
  return holder;
}

async function release(holder: LockkitProcess): Promise<void> {
  holder.finish();
  expect((await holder.exited).code).toBe(0);
}

describe('lockkit run, flock-style', () => {
  it('-n / --nonblock: exit 75 at once when the lock is held; runs when it is free', async () => {
    const holder = await holding('nonblock');
    for (const flag of ['-n', '--nonblock']) {
      const result = await lockkit('run', url, 'nonblock', flag, ...childCommand());
      expect(result.code).toBe(75);
      expect(result.stdout).not.toContain('ready');
      expect(result.stderr).toContain('"nonblock" is held elsewhere; not waiting');
    }
    await release(holder);
    expect((await lockkit('run', url, 'nonblock', '-n', ...childCommand('exit=0'))).code).toBe(0);
  });

  it('-w / --wait SECONDS: fractional seconds; gives up after them with 75', async () => {
    const holder = await holding('wait');
    const started = performance.now();
    const result = await lockkit('run', url, 'wait', '-w', '0.3', ...childCommand());
    expect(result.code).toBe(75);
    expect(result.stderr).toContain('timed out after 300 ms waiting for "wait"');
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    // -w 0 is one attempt, as in flock(1).
    expect((await lockkit('run', url, 'wait', '--wait', '0', ...childCommand())).code).toBe(75);
    await release(holder);
  });

  it('-w: a waiter gets the lock when the holder lets go within the wait', async () => {
    const holder = await holding('wait-gets');
    const waiter = new LockkitProcess([
      'run',
      url,
      'wait-gets',
      '--wait=30',
      '--verbose',
      ...childCommand('exit=0'),
    ]);
    await waiter.waitFor('stderr', /waiting for lock "wait-gets"/);
    await release(holder);
    expect((await waiter.exited).code).toBe(0);
    expect(waiter.stdout).toContain('ready');
  });

  it('-E / --conflict-exit-code N: the status when the lock could not be taken', async () => {
    const holder = await holding('conflict');
    expect((await lockkit('run', url, 'conflict', '-n', '-E', '1', ...childCommand())).code).toBe(
      1,
    );
    expect(
      (
        await lockkit(
          'run',
          url,
          'conflict',
          '-w',
          '0.1',
          '--conflict-exit-code',
          '0',
          '-c',
          'exit 9',
        )
      ).code,
    ).toBe(0);
    await release(holder);
    // The command's own status is not changed by -E.
    expect((await lockkit('run', url, 'conflict', '-n', '-E', '1', '-c', 'exit 9')).code).toBe(9);
  });

  it('-c / --command: runs the string with /bin/sh -c, with the lock variables set', async () => {
    const result = await lockkit(
      'run',
      url,
      'shell',
      '-c',
      'echo "token=$LOCKKIT_FENCING_TOKEN name=$LOCKKIT_LOCK_NAME" | tr a-z A-Z; exit 3',
    );
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('TOKEN=1 NAME=SHELL\n');
    const long = await lockkit('run', url, 'shell', '--command', 'test -n "$LOCKKIT_BACKEND"');
    expect(long.code).toBe(0);
  });

  it('-c: a shell command that is not found is 127, as from the shell', async () => {
    const result = await lockkit('run', url, 'shell-missing', '-c', 'lockkit-test-no-such-command');
    expect(result.code).toBe(127);
  });
});
