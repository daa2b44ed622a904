import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BackendUnavailableError, type ILockProvider } from '@lockkit/core';
import { findFreePort, type ServerHandle, startPostgres } from '@lockkit/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSettings } from './global-setup.js';
import { Harness, timeScale, uniqueName } from './support.js';

// Its own server: the test turns on password authentication and pauses it.
let server: ServerHandle;
const user = 'lockkit_password_user';
beforeAll(async () => {
  server = await startPostgres({ useEnvironment: false, settings: postgresSettings });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${user} LOGIN PASSWORD 'right-password'`);
    await admin.query(`GRANT CREATE ON SCHEMA public TO ${user}`); // for the fencing sequence
    const result = await admin.query<{ hba: string }>("SELECT current_setting('hba_file') AS hba");
    const hba = result.rows[0]!.hba;
    // That role must give its password over TCP; everyone else stays on trust.
    const rules = await readFile(hba, 'utf8');
    await writeFile(hba, `host all ${user} 127.0.0.1/32 scram-sha-256\n${rules}`);
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
}, 60_000);
afterAll(() => server?.stop());

const harness = new Harness('postgres://unused');

function urlWith(change: (url: URL) => void): string {
  const url = new URL(server.url);
  change(url);
  return url.toString();
}

/** What `provider.createLock(…).tryAcquire()` rejects with (fails if it resolves). */
async function tryError(provider: ILockProvider): Promise<BackendUnavailableError> {
  const error = await provider
    .createLock(uniqueName('unreachable'))
    .tryAcquire()
    .then(
      () => new Error('resolved'),
      (e: unknown) => e,
    );
  expect(BackendUnavailableError.isInstance(error), String(error)).toBe(true);
  return error as BackendUnavailableError;
}

describe('a server that cannot be used', () => {
  it('the right password works (the role is set up right)', async () => {
    const provider = harness.provider({
      connection: urlWith((url) => {
        url.username = user;
        url.password = 'right-password';
      }),
    });
    const handle = await provider.createLock(uniqueName('password')).tryAcquire();
    expect(await handle?.release()).toBe(true);
  });

  it('a wrong password: BackendUnavailableError with the address and the server message', async () => {
    const provider = harness.provider({
      connection: urlWith((url) => {
        url.username = user;
        url.password = 'wrong-password';
      }),
    });
    const error = await tryError(provider);
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).toMatch(/password authentication failed/);
    expect((error.cause as { code?: string }).code).toBe('28P01');
    // Not an outage: even a wait without a deadline fails at once instead of retrying.
    expect((error as BackendUnavailableError).retryable).toBe(false);
    await expect(provider.createLock('untimed').acquire()).rejects.toSatisfy(
      BackendUnavailableError.isInstance,
    );
  });

  it('a database that does not exist: BackendUnavailableError, no fallback', async () => {
    const provider = harness.provider({
      connection: urlWith((url) => {
        url.pathname = '/no_such_database';
      }),
    });
    const error = await tryError(provider);
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).toMatch(/database "no_such_database" does not exist/);
    expect((error.cause as { code?: string }).code).toBe('3D000');
    expect((error as BackendUnavailableError).retryable).toBe(false);
  });

  it('an unknown host: BackendUnavailableError naming host and port', async () => {
    const provider = harness.provider({
      connection: 'postgres://postgres@no-such-host.invalid:5432/postgres',
    });
    const error = await tryError(provider);
    expect(error.message).toContain('no-such-host.invalid:5432');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('nothing listening: BackendUnavailableError naming the address, cause ECONNREFUSED', async () => {
    const port = await findFreePort();
    const provider = harness.provider({
      connection: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    const error = await tryError(provider);
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('a paused server: new and open sessions fail within unavailableMs; close() resolves', async () => {
    const options = { connectTimeoutMs: 300, keepaliveIntervalMs: 200, keepaliveTimeoutMs: 300 };
    const warm = harness.provider({ connection: server.url, ...options });
    const cold = harness.provider({ connection: server.url, ...options });
    expect(warm.capabilities.unavailableMs).toBe(750);
    await (await warm.createLock(uniqueName('warm')).acquire()).release(); // a session stays open
    await server.pause();
    try {
      const bound = (warm.capabilities.unavailableMs + 500) * timeScale;
      for (const provider of [warm, cold]) {
        const started = performance.now();
        const error = await tryError(provider);
        expect(performance.now() - started).toBeLessThanOrEqual(bound);
        expect(error.message).toContain(`127.0.0.1:${server.port}`);
        const closing = performance.now();
        await provider.close();
        expect(performance.now() - closing).toBeLessThanOrEqual(bound);
      }
    } finally {
      await server.resume();
    }
  });
});

describe('processes exit', () => {
  it('a script that acquires and releases but never calls close() exits on its own', async () => {
    const script = fileURLToPath(new URL('./fixtures/idle-exit.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, server.url], {
      cwd: join(fileURLToPath(new URL('.', import.meta.url)), '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // Its sessions stay open for 10 minutes (idleTimeoutMs): only unref'd sockets let it go.
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000 * timeScale);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(killer);
    expect(output).toMatch(/done with [1-9]\d* sessions open/);
    expect(code).toBe(0);
  }, 60_000);
});
