import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { childCommand, LockkitProcess, lockkit, withQuery } from './lockkit-process.js';

// `lockkit run` against real PostgreSQL, MariaDB and etcd servers from the
// testkit.

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

  it('a killed session is a lost lock: the command is stopped and lockkit exits 76', async () => {
    // Only the holder's own session is ended: other files' tests share the server (two workers).
    const applicationName = `lockkit-cli-lost-${process.pid}`;
    const holder = new LockkitProcess([
      'run',
      withQuery(postgresUrl, `applicationName=${applicationName}`),
      'pg-lost',
      ...childCommand('trap'),
    ]);
    await holder.ready();
    expect(await terminateSessions(applicationName)).toBeGreaterThan(0);
    await holder.waitFor('stdout', /signal SIGTERM/);
    holder.finish();
    expect((await holder.exited).code).toBe(76);
    expect(holder.stderr).toMatch(/Lock "pg-lost" was lost/);
  });
});

/** Ends, from the server's side, the sessions with this application_name; how many it ended. */
async function terminateSessions(applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const result = await client.query<{ ended: number }>(
      `SELECT count(*)::int AS ended FROM (
         SELECT pg_terminate_backend(pid, 5000) AS terminated FROM pg_stat_activity
         WHERE application_name = $1
       ) AS attempts WHERE terminated`,
      [applicationName],
    );
    return result.rows[0]?.ended ?? 0;
  } finally {
    await client.end();
  }
}

describe('lockkit on MariaDB', () => {
  it('run excludes across processes', async () => {
    const holder = new LockkitProcess(['run', mysqlUrl, 'my-lock', ...childCommand()]);
    expect(await holder.ready()).toMatchObject({ backend: 'mysql' });
    expect((await lockkit('run', mysqlUrl, 'my-lock', '-t', '0', ...childCommand())).code).toBe(75);
    holder.finish();
    expect((await holder.exited).code).toBe(0);
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

describe('lockkit on etcd', () => {
  const etcdUrl = servers.etcdUrl!;

  it('run excludes across processes; a writer waits for the readers', async () => {
    const holder = new LockkitProcess(['run', etcdUrl, 'etcd-lock', ...childCommand()]);
    expect(await holder.ready()).toMatchObject({ backend: 'etcd' });
    expect((await lockkit('run', etcdUrl, 'etcd-lock', '-t', '0', ...childCommand())).code).toBe(
      75,
    );
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
    const waiting = JSON.parse(
      (await lockkit('inspect', etcdUrl, 'etcd-rw', '--shared', '--json')).stdout,
    );
    expect(waiting.holders.map((entry: { kind: string }) => entry.kind)).toEqual(['read', 'read']);
    for (const reader of readers) reader.finish();
    await writer.ready();
    writer.finish();
    await Promise.all([...readers, writer].map((each) => each.exited));
  });
});
