import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BackendUnavailableError, type ILockProvider } from '@lockkit/core';
import { findFreePort, type ServerHandle, startMariaDb } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, ms, provider, uniqueName } from './support.js';

// Its own server: the test pauses it.
let server: ServerHandle;
const user = 'lockkit_password_user';
beforeAll(async () => {
  server = await startMariaDb({ useEnvironment: false });
  await adminQuery(`CREATE USER '${user}'@'%' IDENTIFIED BY 'right-password'`, [], server.url);
  await adminQuery(`GRANT ALL ON test.* TO '${user}'@'%'`, [], server.url);
}, 120_000);
afterAll(() => server?.stop());

function urlWith(change: (url: URL) => void): string {
  const url = new URL(server.url);
  change(url);
  return url.toString();
}

/** What `provider.createLock(…).tryAcquire()` rejects with (fails if it resolves). */
async function tryError(locks: ILockProvider): Promise<BackendUnavailableError> {
  const error = await locks
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
  it('the right password works (the user is set up right)', async () => {
    const locks = provider({
      connection: urlWith((url) => {
        url.username = user;
        url.password = 'right-password';
      }),
    });
    const handle = await locks.createLock(uniqueName('password')).tryAcquire();
    expect(await handle?.release()).toBe(true);
  });

  it('a wrong password: BackendUnavailableError with the address and the server message', async () => {
    const locks = provider({
      connection: urlWith((url) => {
        url.username = user;
        url.password = 'wrong-password';
      }),
    });
    const error = await tryError(locks);
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).toMatch(/Access denied for user/);
    expect((error.cause as { code?: string }).code).toBe('ER_ACCESS_DENIED_ERROR');
    expect((error as BackendUnavailableError).retryable).toBe(false);
  });

  it('a database that does not exist: BackendUnavailableError, no fallback', async () => {
    const locks = provider({
      connection: urlWith((url) => {
        url.pathname = '/no_such_database';
      }),
    });
    const error = await tryError(locks);
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).toMatch(/Unknown database 'no_such_database'/);
    expect((error.cause as { code?: string }).code).toBe('ER_BAD_DB_ERROR');
    expect((error as BackendUnavailableError).retryable).toBe(false);
  });

  it('an unknown host: BackendUnavailableError naming host and port', async () => {
    const locks = provider({ connection: 'mysql://root@no-such-host.invalid:3306/test' });
    const error = await tryError(locks);
    expect(error.message).toContain('no-such-host.invalid:3306');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('nothing listening: BackendUnavailableError naming the address, cause ECONNREFUSED', async () => {
    const port = await findFreePort();
    const locks = provider({ connection: `mysql://root@127.0.0.1:${port}/test` });
    const error = await tryError(locks);
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('a paused server: new and open sessions fail within unavailableMs; close() resolves', async () => {
    const options = { connectTimeoutMs: 300, keepaliveIntervalMs: 200, keepaliveTimeoutMs: 300 };
    const warm = provider({ connection: server.url, ...options });
    const cold = provider({ connection: server.url, ...options });
    expect(warm.capabilities.unavailableMs).toBe(750);
    await (await warm.createLock(uniqueName('warm')).acquire()).release(); // a session stays open
    await server.pause();
    try {
      const bound = ms(warm.capabilities.unavailableMs + 500);
      for (const locks of [warm, cold]) {
        const started = performance.now();
        const error = await tryError(locks);
        expect(performance.now() - started).toBeLessThanOrEqual(bound);
        expect(error.message).toContain(`127.0.0.1:${server.port}`);
        const closing = performance.now();
        await locks.close();
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
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // Its sessions stay open (sharedConnections + idleConnections are kept): only unref'd
    // sockets let it go.
    const killer = setTimeout(() => child.kill('SIGKILL'), ms(20_000));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(killer);
    expect(output).toMatch(/done with [1-9]\d* sessions open/);
    expect(code).toBe(0);
  }, 60_000);
});
