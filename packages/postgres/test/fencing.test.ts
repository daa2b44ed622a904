import { BackendUnavailableError } from '@lockkit/core';
import { type ServerHandle, startPostgres } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advisoryKey } from '../src/index.js';
import { postgresSettings } from './global-setup.js';
import { advisoryLocks, Harness, uniqueName } from './support.js';

// Restarts the server: this file runs its own PostgreSQL.
let server: ServerHandle;
beforeAll(async () => {
  server = await startPostgres({ useEnvironment: false, settings: postgresSettings });
}, 60_000);
afterAll(() => server?.stop());

const harness = new Harness('postgres://unused');

async function tokenOf(name: string): Promise<bigint> {
  const provider = harness.provider({ connection: server.url });
  const handle = await provider.createLock(name).acquire({ timeout: 5000 });
  await handle.release();
  await provider.close();
  return handle.fencingToken;
}

describe('fencing tokens', () => {
  it('come from a sequence created on demand with CACHE 1', async () => {
    const admin = await harness.client({ connectionString: server.url });
    const before = await admin.query("SELECT to_regclass('lockkit_fencing_token') AS seq");
    expect(before.rows[0].seq).toBeNull();
    const first = await tokenOf(uniqueName('created'));
    const seq = await admin.query<{ cache: string; last: string }>(
      `SELECT s.seqcache::text AS cache, (SELECT last_value::text FROM lockkit_fencing_token) AS last
       FROM pg_sequence s WHERE s.seqrelid = 'lockkit_fencing_token'::regclass`,
    );
    expect(seq.rows[0]).toEqual({ cache: '1', last: String(first) });
  });

  it('keep increasing across a clean restart and across a crash (SIGKILL of the server)', async () => {
    const name = uniqueName('restarts');
    const tokens = [await tokenOf(name), await tokenOf(name)];
    await server.restart(); // graceful
    tokens.push(await tokenOf(name));
    for (let i = 0; i < 40; i++) await tokenOf(uniqueName('burn')); // past a WAL-logged batch
    tokens.push(await tokenOf(name));
    await server.kill(); // crash: no shutdown checkpoint, WAL recovery on start
    await server.restart();
    tokens.push(await tokenOf(name));
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
  }, 60_000);

  it('concurrent first users of a new sequence all succeed (creation race)', async () => {
    const fencingSequence = `fence_${uniqueName('race').replace(/[^a-z0-9]/g, '_')}`;
    const providers = Array.from({ length: 6 }, () =>
      harness.provider({ connection: server.url, fencingSequence }),
    );
    const handles = await Promise.all(
      providers.map((provider, i) => provider.createLock(uniqueName(`race-${i}`)).acquire()),
    );
    expect(new Set(handles.map((handle) => handle.fencingToken)).size).toBe(6);
    for (const handle of handles) await handle.release();
  });

  it('a schema-qualified, quoted sequence name works', async () => {
    const admin = await harness.client({ connectionString: server.url });
    await admin.query('CREATE SCHEMA IF NOT EXISTS "Lock Kit"');
    const provider = harness.provider({
      connection: server.url,
      fencingSequence: '"Lock Kit"."Fence; DROP TABLE x"',
    });
    const handle = await provider.createLock(uniqueName('quoted')).acquire();
    await handle.release();
    const found = await admin.query(
      `SELECT last_value::text AS last FROM "Lock Kit"."Fence; DROP TABLE x"`,
    );
    expect(found.rows[0].last).toBe(String(handle.fencingToken));
  });

  it('a missing sequence with createFencingSequence: false fails the attempt and leaks nothing', async () => {
    const admin = await harness.client({ connectionString: server.url });
    const provider = harness.provider({
      connection: server.url,
      fencingSequence: 'no_such_sequence',
      createFencingSequence: false,
    });
    const name = uniqueName('missing');
    // An untimed acquire would keep retrying (the outage policy); one attempt fails at once.
    const error = await provider
      .createLock(name)
      .tryAcquire()
      .catch((e: unknown) => e);
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).toMatch(/no_such_sequence/);
    expect(await advisoryLocks(admin, advisoryKey('', 'mutex', name))).toEqual([]);
  });

  it('a sequence the role may not use: the failed statement leaves no lock behind (mutex and semaphore)', async () => {
    const admin = await harness.client({ connectionString: server.url });
    await admin.query('DROP ROLE IF EXISTS lockkit_limited');
    await admin.query('CREATE ROLE lockkit_limited LOGIN');
    await admin.query('CREATE SEQUENCE IF NOT EXISTS private_fence CACHE 1');
    await admin.query('REVOKE ALL ON SEQUENCE private_fence FROM PUBLIC');
    const url = new URL(server.url);
    url.username = 'lockkit_limited';
    const provider = harness.provider({
      connection: url.toString(),
      fencingSequence: 'private_fence',
      sharedConnections: 1,
    });
    const name = uniqueName('denied');
    for (const attempt of [
      () => provider.createLock(name).tryAcquire(),
      () => provider.createSemaphore(name, 3).tryAcquire(),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(BackendUnavailableError.isInstance(error)).toBe(true);
      expect(String((error as Error).message)).toMatch(/permission denied/);
    }
    const left = await admin.query(
      `SELECT count(*)::int AS count FROM pg_locks l JOIN pg_stat_activity a USING (pid)
       WHERE l.locktype = 'advisory' AND a.usename = 'lockkit_limited'`,
    );
    expect(left.rows[0].count).toBe(0);
    await provider.close();
  });
});
