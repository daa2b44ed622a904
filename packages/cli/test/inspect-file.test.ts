import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFileLockProvider } from '@lockkit/file';
import { afterAll, describe, expect, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit } from './lockkit-process.js';

const directory = mkdtempSync(join(tmpdir(), 'lockkit-inspect-'));
const url = pathToFileURL(directory).href;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('lockkit inspect (file backend)', () => {
  it('names the holding process (the lockkit that holds it) and the last token', async () => {
    const holder = new LockkitProcess(['run', url, 'report', ...childCommand()]);
    await holder.ready();
    const held = await lockkit('inspect', url, 'report', '--json');
    expect(held.code).toBe(0);
    const report = JSON.parse(held.stdout);
    expect(report).toMatchObject({ backend: 'file', canTell: true, lastFencingToken: '1' });
    expect(report.holders).toEqual([
      expect.objectContaining({
        role: 'holder',
        details: expect.objectContaining({
          pid: holder.pid,
          thisHost: true,
          running: true,
          stale: false,
        }),
      }),
    ]);
    const text = await lockkit('inspect', url, 'report');
    expect(text.stdout).toContain(`: held\n  holder   pid ${holder.pid} on this host (running)`);
    holder.finish();
    await holder.exited;
    const free = await lockkit('inspect', url, 'report');
    expect(free.stdout).toContain(`lock "report" on ${url} (file backend): free`);
    expect(free.stdout).toContain('last fencing token: 1');
  });

  it("judges a mutex holder's heartbeat by its lock directory (proper-lockfile's mtime)", async () => {
    const holder = new LockkitProcess(['run', `${url}?leaseMs=2000`, 'beat', ...childCommand()]);
    await holder.ready();
    const keyDirectory = readdirSync(directory).find((entry) => entry.startsWith('mutex.beat.'));
    const lockDir = join(directory, keyDirectory!, 'lock');
    const [marker] = readdirSync(lockDir);
    const longAgo = (Date.now() - 60_000) / 1000;
    // The marker's own mtime says nothing for a lock directory holder.
    utimesSync(join(lockDir, marker!), longAgo, longAgo);
    const fresh = JSON.parse(
      (await lockkit('inspect', `${url}?leaseMs=2000`, 'beat', '--json')).stdout,
    );
    expect(fresh.holders[0].details.stale).toBe(false);
    holder.finish();
    await holder.exited;
  });

  it('lists readers and semaphore permits', async () => {
    const holders = [
      new LockkitProcess(['run', url, 'catalog', '--shared', ...childCommand()]),
      new LockkitProcess(['run', url, 'catalog', '--shared', ...childCommand()]),
      new LockkitProcess(['run', url, 'exports', '--semaphore', '3', ...childCommand()]),
    ];
    await Promise.all(holders.map((holder) => holder.ready()));
    const readers = JSON.parse((await lockkit('inspect', url, 'catalog', '-s', '--json')).stdout);
    expect(
      readers.holders.map((holder: { details: { pid: number } }) => holder.details.pid).sort(),
    ).toEqual([holders[0]!.pid, holders[1]!.pid].sort());
    const permits = JSON.parse(
      (await lockkit('inspect', url, 'exports', '--semaphore', '3', '--json')).stdout,
    );
    expect(permits.holders).toEqual([expect.objectContaining({ role: 'permit' })]);
    // The mutex "catalog" is another lock: free.
    expect((await lockkit('inspect', url, 'catalog')).stdout).toContain(': free');
    for (const holder of holders) holder.finish();
    await Promise.all(holders.map((holder) => holder.exited));
  });

  it('counts the permits of a holder that took several at once', async () => {
    const provider = createFileLockProvider({ directory });
    try {
      const handle = await provider.createSemaphore('batch', 5).acquire({ permits: 3 });
      const report = JSON.parse(
        (await lockkit('inspect', url, 'batch', '--semaphore', '5', '--json')).stdout,
      );
      expect(report.holders).toEqual([
        expect.objectContaining({
          role: 'permit',
          details: expect.objectContaining({ permits: 3, pid: process.pid }),
        }),
      ]);
      await handle.release();
    } finally {
      await provider.close();
    }
  });

  it('says when a backend cannot tell, without connecting', async () => {
    const redis = await lockkit('inspect', 'redis://127.0.0.1:1', 'x');
    expect(redis.code).toBe(0);
    expect(redis.stdout).toContain('cannot tell who holds it: Redis stores only a random token');
    const zookeeper = await lockkit('inspect', 'zk://127.0.0.1:1', 'x', '--json');
    expect(JSON.parse(zookeeper.stdout)).toMatchObject({ backend: 'zookeeper', canTell: false });
  });

  it('a lock directory that does not exist is an error (69), not a free lock', async () => {
    const missing = pathToFileURL(join(directory, 'no-such-dir', 'deeper')).href;
    const result = await lockkit('inspect', missing, 'report');
    expect(result.code).toBe(69);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^lockkit: backend unavailable: Lock directory \/.*deeper does not exist/,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    const file = join(directory, 'a-file');
    writeFileSync(file, '');
    const notDirectory = await lockkit('inspect', pathToFileURL(file).href, 'report');
    expect(notDirectory.code).toBe(69);
    expect(notDirectory.stderr).toContain('is not a directory');
  });
});
