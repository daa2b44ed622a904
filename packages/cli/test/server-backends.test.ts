import { attachServer } from '@lockkit/testkit';
import { describe, expect, inject, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit } from './lockkit-process.js';

// `lockkit run` and `lockkit inspect` against real PostgreSQL, MariaDB and etcd servers from the
// testkit. One file, so the connection-killing fault cannot hit another file's test.

const servers = inject('lockkitServers');
const postgresUrl = servers.postgresUrl!;
const mysqlUrl = servers.mysqlUrl!;

describe('lockkit run on PostgreSQL', () => {
  it('excludes across processes and hands out increasing tokens', async () => {
    const holder = new LockkitProcess(['run', postgresUrl, 'pg-exclusion', ...childCommand()]);
    const first = await holder.ready();
    expect(first).toMatchObject({ backend: 'postgres', kind: 'mutex', name: 'pg-exclusion' });
    expect(
      (await lockkit('run', postgresUrl, 'pg-exclusion', '-t', '200', ...childCommand())).code,
    ).toBe(75);
    holder.finish();
    expect((await holder.exited).code).toBe(0);
    const next = await lockkit(
      'run',
      postgresUrl,
      'pg-exclusion',
      '-t',
      '0',
      ...childCommand('exit=0'),
    );
    expect(next.code).toBe(0);
    const token = JSON.parse(/ready (\{.*\})/.exec(next.stdout)?.[1] ?? '{}').token as string;
    expect(BigInt(token)).toBeGreaterThan(BigInt(first.token ?? 0));
  });

  it('inspect names the holder session (by its application name); free after release', async () => {
    const holder = new LockkitProcess([
      'run',
      `${postgresUrl}?applicationName=nightly-job`,
      'pg-inspect',
      ...childCommand(),
    ]);
    await holder.ready();
    const held = await lockkit('inspect', postgresUrl, 'pg-inspect', '--json');
    expect(held.code).toBe(0);
    const report = JSON.parse(held.stdout);
    expect(report).toMatchObject({ backend: 'postgres', canTell: true });
    expect(report.holders).toHaveLength(1);
    expect(report.holders[0].details.applicationName).toBe('nightly-job');
    holder.finish();
    await holder.exited;
    const free = await lockkit('inspect', postgresUrl, 'pg-inspect');
    expect(free.stdout).toMatch(/lock "pg-inspect" on postgres:\/\/.* \(postgres backend\): free/);
  });

  it('a killed session is a lost lock: the command is stopped and lockkit exits 76', async ({
    skip,
  }) => {
    const postgres = attachServer(servers.servers.postgres!);
    if (!postgres.controllable) skip('LOCKKIT_POSTGRES_URL points at a server we do not control');
    const holder = new LockkitProcess(['run', postgresUrl, 'pg-lost', ...childCommand('trap')]);
    await holder.ready();
    expect(await postgres.dropClientConnections()).toBeGreaterThan(0);
    await holder.waitFor('stdout', /signal SIGTERM/);
    holder.finish();
    expect((await holder.exited).code).toBe(76);
    expect(holder.stderr).toMatch(/Lock "pg-lost" was lost/);
  });
});

describe('lockkit on MariaDB', () => {
  it('run excludes; inspect names the holding connection, and the RW readers', async () => {
    const holder = new LockkitProcess(['run', mysqlUrl, 'my-lock', ...childCommand()]);
    expect(await holder.ready()).toMatchObject({ backend: 'mysql' });
    expect((await lockkit('run', mysqlUrl, 'my-lock', '-t', '0', ...childCommand())).code).toBe(75);
    const report = JSON.parse((await lockkit('inspect', mysqlUrl, 'my-lock', '--json')).stdout);
    expect(report.holders).toHaveLength(1);
    expect(report.holders[0]).toMatchObject({ role: 'holder', details: { user: 'root' } });
    holder.finish();
    await holder.exited;

    const readers = [1, 2].map(
      () => new LockkitProcess(['run', mysqlUrl, 'my-rw', '--shared', ...childCommand()]),
    );
    await Promise.all(readers.map((reader) => reader.ready()));
    const rw = JSON.parse(
      (await lockkit('inspect', mysqlUrl, 'my-rw', '--shared', '--json')).stdout,
    );
    expect(rw.holders.map((entry: { role: string }) => entry.role)).toEqual(['reader', 'reader']);
    for (const reader of readers) reader.finish();
    await Promise.all(readers.map((reader) => reader.exited));
    const free = await lockkit('inspect', mysqlUrl, 'my-rw', '--exclusive');
    expect(free.stdout).toContain(': free');
  });
});

describe('lockkit demo on a server backend', () => {
  it('sells exactly 10 with worker processes locking on PostgreSQL', async () => {
    const result = await lockkit('demo', postgresUrl);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('backend: postgres at postgres://');
    expect(result.stdout).toContain('OK: exactly 10 sold, no oversell');
  });
});

/** Polls `condition` until it holds (server state has no event to await here). */
async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('lockkit on etcd', () => {
  const etcdUrl = servers.etcdUrl!;

  it('run excludes; inspect names the holding process and its lease, and the RW readers and a waiting writer', async () => {
    const holder = new LockkitProcess(['run', etcdUrl, 'etcd-lock', ...childCommand()]);
    const ready = await holder.ready();
    expect(ready).toMatchObject({ backend: 'etcd' });
    expect((await lockkit('run', etcdUrl, 'etcd-lock', '-t', '0', ...childCommand())).code).toBe(
      75,
    );
    const report = JSON.parse((await lockkit('inspect', etcdUrl, 'etcd-lock', '--json')).stdout);
    expect(report).toMatchObject({ backend: 'etcd', canTell: true, waiters: [] });
    expect(report.holders).toHaveLength(1);
    expect(report.holders[0]).toMatchObject({
      role: 'holder',
      details: { pid: holder.pid, fencingToken: ready.token },
    });
    holder.finish();
    await holder.exited;

    const readers = [1, 2].map(
      () => new LockkitProcess(['run', etcdUrl, 'etcd-rw', '--shared', ...childCommand()]),
    );
    await Promise.all(readers.map((reader) => reader.ready()));
    const writer = new LockkitProcess([
      'run',
      etcdUrl,
      'etcd-rw',
      '--exclusive',
      ...childCommand(),
    ]);
    const rw = async (): Promise<{ holders: { role: string }[]; waiters: { role: string }[] }> =>
      JSON.parse((await lockkit('inspect', etcdUrl, 'etcd-rw', '--shared', '--json')).stdout);
    await waitFor(async () => (await rw()).waiters.length === 1, 10_000, 'the writer waits');
    const queued = await rw();
    expect(queued.holders.map((entry) => entry.role)).toEqual(['reader', 'reader']);
    expect(queued.waiters.map((entry) => entry.role)).toEqual(['waiting']);
    for (const reader of readers) reader.finish();
    await writer.ready();
    writer.finish();
    await Promise.all([...readers, writer].map((each) => each.exited));
    const free = await lockkit('inspect', etcdUrl, 'etcd-rw', '--exclusive');
    expect(free.stdout).toMatch(/read-write lock "etcd-rw" on etcd:\/\/.* \(etcd backend\): free/);
  });
});
