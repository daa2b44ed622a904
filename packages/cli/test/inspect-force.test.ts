import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFileLockProvider } from '@lockkit/file';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit, withQuery } from './lockkit-process.js';

// `lockkit inspect` and `lockkit force-release` on every backend, against the testkit's
// throwaway servers: the same commands, the same report, the same break everywhere.

const servers = inject('lockkitServers');
const directory = mkdtempSync(join(tmpdir(), 'lockkit-inspect-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

// Short leases where the hold is a lease, so a broken holder notices within seconds.
const backends: readonly { readonly id: string; readonly url: string }[] = [
  { id: 'file', url: withQuery(pathToFileURL(directory).href, 'leaseMs=2000') },
  { id: 'redis', url: withQuery(servers.redisUrls[0]!, 'leaseMs=2000') },
  {
    id: 'redis',
    url: withQuery(
      `redis://${servers.redisUrls.map((url) => url.replace(/^redis:\/\//, '')).join(',')}`,
      'leaseMs=2000',
    ),
  },
  { id: 'postgres', url: servers.postgresUrl! },
  { id: 'mysql', url: servers.mysqlUrl! },
  { id: 'zookeeper', url: servers.zookeeperUrl! },
  { id: 'etcd', url: servers.etcdUrl! },
];

describe.each(backends)('lockkit inspect and force-release on $url', ({ id, url }) => {
  const name = `cli-admin-${backends.findIndex((backend) => backend.url === url)}`;

  it('inspect names the holder; force-release refuses without --yes, then breaks the hold and the holder exits 76', async () => {
    const holder = new LockkitProcess([
      'run',
      withQuery(url, 'owner=nightly%20job%20%E2%9C%93'),
      name,
      ...childCommand('trap'),
    ]);
    const ready = await holder.ready();
    const held = await lockkit('inspect', url, name, '--json');
    expect(held.code).toBe(0);
    const report = JSON.parse(held.stdout);
    expect(report).toMatchObject({ backend: id, primitive: 'mutex', held: true });
    expect(report.holders).toEqual([
      expect.objectContaining({ kind: 'mutex', fencingToken: ready.token, owner: 'nightly job ✓' }),
    ]);
    const text = await lockkit('inspect', url, name);
    expect(text.stdout).toContain(`lock "${name}" on `);
    expect(text.stdout).toContain(`: held\n  mutex  token ${ready.token}  owner "nightly job ✓"`);

    const refused = await lockkit('force-release', url, name);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain('add --yes to break them');
    expect(JSON.parse((await lockkit('inspect', url, name, '--json')).stdout).held).toBe(true);

    const forced = await lockkit('force-release', url, name, '--yes');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`mutex  token ${ready.token}`);
    expect(forced.stdout).toContain(`broke 1 hold of lock "${name}"`);
    await holder.waitFor('stdout', /signal SIGTERM/);
    holder.finish();
    expect((await holder.exited).code).toBe(76);
    expect(holder.stderr).toMatch(new RegExp(`Lock "${name}" was lost`));

    const after = JSON.parse((await lockkit('inspect', url, name, '--json')).stdout);
    expect(after).toMatchObject({ held: false, holders: [] });
    const next = await lockkit('run', url, name, '-t', '0', ...childCommand('exit=0'));
    expect(next.code).toBe(0);
    const token = JSON.parse(/ready (\{.*\})/.exec(next.stdout)?.[1] ?? '{}').token as string;
    expect(BigInt(token)).toBeGreaterThan(BigInt(ready.token ?? 0));
    const none = await lockkit('force-release', url, name, '--yes', '--json');
    expect(JSON.parse(none.stdout)).toMatchObject({ broken: 0 });
  }, 60_000);

  it('inspect lists readers of a read-write lock and the permits of a semaphore', async () => {
    const readers = [1, 2].map(
      () => new LockkitProcess(['run', url, `${name}-rw`, '--shared', ...childCommand()]),
    );
    const permit = new LockkitProcess([
      'run',
      url,
      `${name}-sem`,
      '--semaphore',
      '3',
      ...childCommand(),
    ]);
    const tokens = (await Promise.all(readers.map((reader) => reader.ready()))).map((r) => r.token);
    const permitToken = (await permit.ready()).token;
    const rw = JSON.parse((await lockkit('inspect', url, `${name}-rw`, '-x', '--json')).stdout);
    expect(rw).toMatchObject({ primitive: 'read-write', held: true });
    expect(rw.holders.map((h: { kind: string }) => h.kind)).toEqual(['read', 'read']);
    expect(rw.holders.map((h: { fencingToken: string }) => h.fencingToken).sort()).toEqual(
      tokens.sort(),
    );
    const semaphore = JSON.parse(
      (await lockkit('inspect', url, `${name}-sem`, '--semaphore', '3', '--json')).stdout,
    );
    expect(semaphore).toMatchObject({ primitive: 'semaphore', permitsFree: 2 });
    expect(semaphore.holders).toEqual([
      expect.objectContaining({ kind: 'semaphore', permits: 1, fencingToken: permitToken }),
    ]);
    for (const holder of [...readers, permit]) holder.finish();
    await Promise.all([...readers, permit].map((holder) => holder.exited));
    const free = await lockkit('inspect', url, `${name}-rw`, '--shared');
    expect(free.stdout).toMatch(new RegExp(`read-write lock "${name}-rw" on .*: free`));
  }, 60_000);
});

describe('lockkit inspect and force-release: permits and errors', () => {
  it('counts the permits of a holder that took several at once', async () => {
    const url = pathToFileURL(directory).href;
    const provider = createFileLockProvider({ directory, owner: 'batch runner' });
    try {
      const handle = await provider.createSemaphore('batch', 5).acquire({ permits: 3 });
      const report = JSON.parse(
        (await lockkit('inspect', url, 'batch', '--semaphore', '5', '--json')).stdout,
      );
      expect(report).toMatchObject({ permitsFree: 2 });
      expect(report.holders).toEqual([
        expect.objectContaining({ permits: 3, owner: 'batch runner' }),
      ]);
      const text = await lockkit('inspect', url, 'batch', '--semaphore', '5');
      expect(text.stdout).toContain(': held, 2 free\n  permit  ×3  token ');
      await handle.release();
    } finally {
      await provider.close();
    }
  });

  it('a lock directory that cannot be used is an error (69), not a free lock', async () => {
    const file = join(directory, 'a-file');
    writeFileSync(file, '');
    const result = await lockkit('inspect', pathToFileURL(join(file, 'deeper')).href, 'report');
    expect(result.code).toBe(69);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^lockkit: backend unavailable: .*deeper/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an unreachable server is 69 for both commands', async () => {
    expect((await lockkit('inspect', 'redis://127.0.0.1:1', 'x', '--yes')).code).toBe(64);
    for (const command of ['inspect', 'force-release']) {
      const plain = await lockkit(
        command,
        'redis://127.0.0.1:1',
        'x',
        ...(command === 'force-release' ? ['--yes'] : []),
      );
      expect(plain.code).toBe(69);
      expect(plain.stderr).toMatch(/^lockkit: backend unavailable/);
    }
  }, 60_000);
});
