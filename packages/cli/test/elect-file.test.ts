import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit } from './lockkit-process.js';

// `lockkit elect` against the file backend, through the built binary, with real commands.

const directory = mkdtempSync(join(tmpdir(), 'lockkit-cli-elect-'));
const url = pathToFileURL(directory).href;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let names = 0;
/** An election name no other test uses. */
function fresh(label: string): string {
  names += 1;
  return `${label}-${names}`;
}

/** Removes the lock directory of election `name`: its leader's hold is gone, unannounced. */
function breakLeadersHold(name: string): void {
  const keyDirectory = readdirSync(directory).find(
    (entry) => entry.startsWith('mutex.election') && entry.includes(name),
  );
  expect(keyDirectory).toBeDefined();
  rmSync(join(directory, keyDirectory!, 'lock'), { recursive: true });
}

describe('lockkit elect (file backend)', () => {
  it('runs the command on one of two processes only; when it exits, the other is elected with a larger epoch', async () => {
    const name = fresh('one-leader');
    const first = new LockkitProcess(['elect', url, name, '--owner', 'first', ...childCommand()]);
    const firstReady = await first.ready();
    expect(firstReady).toMatchObject({ election: name, owner: 'first', backend: 'file' });
    expect(firstReady.token).toBe(firstReady.epoch);
    const second = new LockkitProcess(['elect', url, name, '--verbose', ...childCommand()]);
    await second.waitFor('stderr', /campaigning in election/);
    first.finish();
    const [firstEnded, secondReady] = await Promise.all([first.bye(), second.ready()]);
    // The second command started only after the first one had ended.
    expect(secondReady.at).toBeGreaterThanOrEqual(firstEnded);
    expect(BigInt(secondReady.epoch ?? 0)).toBeGreaterThan(BigInt(firstReady.epoch ?? 0));
    expect((await first.exited).code).toBe(0); // the command's own status
    second.finish();
    expect((await second.exited).code).toBe(0);
    expect(second.stderr).toMatch(/elected with epoch \d+/);
    expect(second.stderr).toContain('resigned');
  });

  it('a lost leadership stops the command (SIGTERM, SIGKILL after --kill-after), then lockkit is elected again', async () => {
    const name = fresh('lost');
    const leader = new LockkitProcess([
      'elect',
      `${url}?leaseMs=2000`,
      name,
      '--kill-after',
      '300',
      ...childCommand('trap'),
    ]);
    const firstTerm = await leader.ready();
    breakLeadersHold(name);
    const [, terminatedAt = '0'] = await leader.waitFor('stdout', /signal SIGTERM (\d+)/);
    const secondTerm = await leader.nthReady(2);
    // The command ignored SIGTERM: SIGKILL came --kill-after (300 ms) later, not at once.
    expect(secondTerm.at - Number(terminatedAt)).toBeGreaterThanOrEqual(200);
    expect(secondTerm.pid).not.toBe(firstTerm.pid);
    expect(BigInt(secondTerm.epoch ?? 0)).toBeGreaterThan(BigInt(firstTerm.epoch ?? 0));
    expect(leader.stderr).toMatch(/Lock "election:lost-\d+" was lost/);
    expect(leader.stderr).toContain('SIGKILL in 300 ms');
    leader.finish();
    expect((await leader.exited).code).toBe(0);
  });

  it('--once: a lost leadership ends lockkit with exit status 76', async () => {
    const name = fresh('once');
    const leader = new LockkitProcess([
      'elect',
      `${url}?leaseMs=2000`,
      name,
      '--once',
      ...childCommand(),
    ]);
    await leader.ready();
    breakLeadersHold(name);
    expect((await leader.exited).code).toBe(76);
    expect(leader.stdout.match(/ready /g)).toHaveLength(1);
  });

  it('Ctrl-C while campaigning: exit status 130, the command never runs', async () => {
    const name = fresh('interrupt');
    const leader = new LockkitProcess(['elect', url, name, ...childCommand()]);
    await leader.ready();
    const campaigner = new LockkitProcess(['elect', url, name, '--verbose', ...childCommand()]);
    await campaigner.waitFor('stderr', /campaigning/);
    campaigner.child.kill('SIGINT');
    expect((await campaigner.exited).code).toBe(130);
    expect(campaigner.stdout).not.toContain('ready');
    expect(campaigner.stderr).toContain('the command did not run');
    leader.finish();
    expect((await leader.exited).code).toBe(0);
  });

  it('SIGTERM while leading is passed on; the command killed by it gives 143 and the next campaigner is elected', async () => {
    const name = fresh('terminate');
    const leader = new LockkitProcess(['elect', url, name, ...childCommand()]);
    const term = await leader.ready();
    const campaigner = new LockkitProcess(['elect', url, name, ...childCommand()]);
    leader.child.kill('SIGTERM');
    expect((await leader.exited).code).toBe(143);
    const next = await campaigner.ready();
    expect(BigInt(next.epoch ?? 0)).toBeGreaterThan(BigInt(term.epoch ?? 0));
    campaigner.finish();
    expect((await campaigner.exited).code).toBe(0);
  });

  it('-c runs a shell command; a missing command gives 127 and leaves the election free', async () => {
    const name = fresh('shell');
    const missing = await lockkit('elect', url, name, '--', 'lockkit-test-no-such-command');
    expect(missing.code).toBe(127);
    expect(missing.stderr).toContain('command not found');
    const shell = await lockkit('elect', url, name, '-c', 'echo "epoch=$LOCKKIT_EPOCH"; exit 3');
    expect(shell.code).toBe(3);
    expect(shell.stdout).toMatch(/^epoch=\d+\n$/);
  });
});
