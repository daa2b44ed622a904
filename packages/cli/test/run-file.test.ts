import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit } from './lockkit-process.js';

// `lockkit run` against the file backend, always through the built binary.

const directory = mkdtempSync(join(tmpdir(), 'lockkit-cli-'));
const url = pathToFileURL(directory).href;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let names = 0;
/** A lock name no other test uses. */
function fresh(label: string): string {
  names += 1;
  return `${label}-${names}`;
}

describe('lockkit run (file backend)', () => {
  it('gives the command the fencing token, name, kind and backend, and passes its status through', async () => {
    const name = fresh('env');
    const first = await lockkit('run', url, name, ...childCommand('exit=42'));
    expect(first.code).toBe(42);
    const second = await lockkit('run', url, name, ...childCommand('exit=0'));
    expect(second.code).toBe(0);
    const ready = (output: string) => JSON.parse(/ready (\{.*\})/.exec(output)?.[1] ?? '{}');
    expect(ready(first.stdout)).toMatchObject({ token: '1', name, kind: 'mutex', backend: 'file' });
    expect(ready(second.stdout)).toMatchObject({ token: '2', name });
  });

  it('reports a command killed by a signal as 128 + n, and a missing command as 127', async () => {
    const name = fresh('signals');
    expect((await lockkit('run', url, name, ...childCommand('kill=SIGTERM'))).code).toBe(143);
    expect((await lockkit('run', url, name, ...childCommand('kill=SIGKILL'))).code).toBe(137);
    const missing = await lockkit('run', url, name, '--', 'lockkit-test-no-such-command');
    expect(missing.code).toBe(127);
    expect(missing.stderr).toContain('command not found');
  });

  it('excludes: a second run waits until the first command has exited, then gets a larger token', async () => {
    const name = fresh('exclusion');
    const first = new LockkitProcess(['run', url, name, ...childCommand()]);
    const firstReady = await first.ready();
    const second = new LockkitProcess(['run', url, name, '--verbose', ...childCommand('exit=0')]);
    await second.waitFor('stderr', /waiting for lock "exclusion-\d+"/);
    first.finish();
    const [firstEnded, secondReady] = await Promise.all([first.bye(), second.ready()]);
    // The second command started only after the first one had finished.
    expect(secondReady.at).toBeGreaterThanOrEqual(firstEnded);
    expect(BigInt(secondReady.token ?? 0)).toBeGreaterThan(BigInt(firstReady.token ?? 0));
    expect((await first.exited).code).toBe(0);
    expect((await second.exited).code).toBe(0);
  });

  it('--timeout: gives up with exit status 75 and does not run the command', async () => {
    const name = fresh('timeout');
    const holder = new LockkitProcess(['run', url, name, ...childCommand()]);
    await holder.ready();
    const started = performance.now();
    const waiter = await lockkit('run', url, name, '--timeout', '300ms', ...childCommand());
    const waited = performance.now() - started;
    expect(waiter.code).toBe(75);
    expect(waiter.stdout).not.toContain('ready');
    expect(waiter.stderr).toContain(`timed out after 300 ms waiting for "${name}"`);
    expect(waited).toBeGreaterThanOrEqual(300);
    const once = await lockkit('run', url, name, '-t', '0', ...childCommand());
    expect(once.code).toBe(75);
    expect(once.stderr).toContain('is held elsewhere');
    holder.finish();
    expect((await holder.exited).code).toBe(0);
  });

  it('--shared holders share, --exclusive waits for them; --semaphore N admits N', async () => {
    const name = fresh('modes');
    const readers = [
      new LockkitProcess(['run', url, name, '--shared', ...childCommand()]),
      new LockkitProcess(['run', url, name, '-s', ...childCommand()]),
    ];
    const kinds = await Promise.all(readers.map(async (reader) => (await reader.ready()).kind));
    expect(kinds).toEqual(['read', 'read']);
    expect(
      (await lockkit('run', url, name, '--exclusive', '-t', '0', ...childCommand())).code,
    ).toBe(75);
    // The mutex of the same name is a different lock.
    expect((await lockkit('run', url, name, '-t', '0', ...childCommand('exit=0'))).code).toBe(0);
    for (const reader of readers) reader.finish();
    await Promise.all(readers.map((reader) => reader.exited));
    expect((await lockkit('run', url, name, '-x', '-t', '0', ...childCommand('exit=0'))).code).toBe(
      0,
    );

    const permits = [1, 2].map(
      () => new LockkitProcess(['run', url, name, '--semaphore', '2', ...childCommand()]),
    );
    const permitKinds = await Promise.all(
      permits.map(async (permit) => (await permit.ready()).kind),
    );
    expect(permitKinds).toEqual(['semaphore', 'semaphore']);
    expect(
      (await lockkit('run', url, name, '--semaphore', '2', '-t', '0', ...childCommand())).code,
    ).toBe(75);
    for (const permit of permits) permit.finish();
    await Promise.all(permits.map((permit) => permit.exited));
  });

  it('a lost lock: the command gets SIGTERM, then SIGKILL after --kill-after; exit status 76', async () => {
    const name = fresh('lost');
    // A 2 s lease is checked every 667 ms; the check after the lock directory is
    // removed notices the loss.
    const holder = new LockkitProcess([
      'run',
      `${url}?leaseMs=2000`,
      name,
      '--kill-after',
      '300',
      ...childCommand('trap'),
    ]);
    await holder.ready();
    const keyDirectory = readdirSync(directory).find((entry) => entry.startsWith(`mutex.${name}.`));
    expect(keyDirectory).toBeDefined();
    rmSync(join(directory, keyDirectory!, 'lock'), { recursive: true });
    const [, terminatedAt = '0'] = await holder.waitFor('stdout', /signal SIGTERM (\d+)/);
    const exit = await holder.exited;
    expect(exit.code).toBe(76);
    // The command ignored SIGTERM; SIGKILL came --kill-after (300 ms) later, not at once.
    expect(Date.now() - Number(terminatedAt)).toBeGreaterThanOrEqual(200);
    expect(holder.stderr).toMatch(/Lock "lost-\d+" was lost/);
    expect(holder.stderr).toContain('SIGKILL in 300 ms');
  });

  it('a lease that runs out (autoExtend=false) stops the command too', async () => {
    const name = fresh('lease');
    const holder = new LockkitProcess([
      'run',
      `${url}?leaseMs=2000&autoExtend=false`,
      name,
      ...childCommand(),
    ]);
    await holder.ready();
    const exit = await holder.exited;
    expect(exit.code).toBe(76);
    expect(holder.stderr).toContain('SIGTERM now');
  });

  it('Ctrl-C: passed on to the command; the lock stays held until it exits, then is released', async () => {
    const name = fresh('interrupt');
    const holder = new LockkitProcess(['run', url, name, ...childCommand('trap')]);
    await holder.ready();
    holder.child.kill('SIGINT');
    await holder.waitFor('stdout', /signal SIGINT/);
    // The command is still running (it trapped the signal), so the lock is still held.
    expect((await lockkit('run', url, name, '-t', '0', ...childCommand())).code).toBe(75);
    holder.finish();
    expect((await holder.exited).code).toBe(0);
    expect((await lockkit('run', url, name, '-t', '0', ...childCommand('exit=0'))).code).toBe(0);
  });

  it('a command killed by the forwarded SIGTERM gives 143, and the lock is free afterwards', async () => {
    const name = fresh('terminate');
    const holder = new LockkitProcess(['run', url, name, ...childCommand()]);
    await holder.ready();
    holder.child.kill('SIGTERM');
    expect((await holder.exited).code).toBe(143);
    expect((await lockkit('run', url, name, '-t', '0', ...childCommand('exit=0'))).code).toBe(0);
  });

  it('Ctrl-C while waiting: stops the wait, exit status 130, the command never runs', async () => {
    const name = fresh('interrupt-wait');
    const holder = new LockkitProcess(['run', url, name, ...childCommand()]);
    await holder.ready();
    const waiter = new LockkitProcess(['run', url, name, '--verbose', ...childCommand()]);
    await waiter.waitFor('stderr', /waiting for/);
    waiter.child.kill('SIGINT');
    expect((await waiter.exited).code).toBe(130);
    expect(waiter.stdout).not.toContain('ready');
    expect(waiter.stderr).toContain('the command did not run');
    holder.finish();
    await holder.exited;
  });
});
