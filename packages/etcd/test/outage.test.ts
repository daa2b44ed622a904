import { BackendUnavailableError } from '@lockkit/core';
import { type ServerHandle, startEtcd } from '@lockkit/testkit';
import { Etcd3, EtcdAuthenticationFailedError } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdLockProvider } from '../src/index.js';
import { hostsOf, testProvider } from './support.js';

const providers: EtcdLockProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function provider(url: string, extra: Parameters<typeof testProvider>[1] = {}): EtcdLockProvider {
  const created = testProvider(url, extra);
  providers.push(created);
  return created;
}

async function failure(attempt: Promise<unknown>): Promise<BackendUnavailableError> {
  const error = await attempt.then(
    () => new Error('resolved'),
    (rejection: unknown) => rejection,
  );
  expect(BackendUnavailableError.isInstance(error), String(error)).toBe(true);
  return error as BackendUnavailableError;
}

describe('a short outage', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startEtcd({ useEnvironment: false });
  });
  afterAll(async () => {
    await server.resume();
    await server.stop();
  });

  it('a waiter keeps its place and a holder its lock while the server is paused for less than a lease', async () => {
    const [holderSide, waiterSide] = [provider(server.url), provider(server.url)];
    const held = await holderSide.createLock('paused').acquire();
    const waiting = waiterSide.createLock('paused').acquire({ timeout: 10_000 });
    // Two thirds of the 2 s lease at most have passed since the last keepalive: 700 ms more
    // keeps it inside the lease, on the server and in the client.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server.pause();
    await new Promise((resolve) => setTimeout(resolve, 700));
    await server.resume();
    expect(held.signal.aborted).toBe(false);
    expect(await held.release()).toBe(true);
    const handle = await waiting;
    expect(handle.fencingToken).toBeGreaterThan(held.fencingToken);
    await handle.release();
  });

  it('an unknown host fails at once with BackendUnavailableError naming it', async () => {
    const locks = provider('etcd://no-such-host.invalid:2379');
    const started = performance.now();
    const error = await failure(locks.createLock('dns').tryAcquire());
    expect(error.message).toContain('no-such-host.invalid:2379');
    expect(error.cause).toBeDefined();
    expect(performance.now() - started).toBeLessThanOrEqual(locks.capabilities.unavailableMs);
  });
});

describe('credentials', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startEtcd({ useEnvironment: false });
    const admin = new Etcd3({ hosts: hostsOf(server.url) });
    try {
      await admin.user('root').create('root-password');
      await admin.user('root').addRole('root');
      await admin.auth.authEnable({});
    } finally {
      admin.close();
    }
  });
  afterAll(() => server.stop());

  it('a wrong password fails every call at once, not retryable, with the server’s answer as cause', async () => {
    const locks = provider(server.url, { auth: { username: 'root', password: 'wrong' } });
    const tried = await failure(locks.createLock('auth').tryAcquire());
    expect(tried.retryable).toBe(false);
    expect(tried.cause).toBeInstanceOf(EtcdAuthenticationFailedError);
    expect(tried.message).toContain(hostsOf(server.url)[0]!);
    // A waiting acquire does not wait out its deadline for credentials that stay wrong.
    const started = performance.now();
    const waited = await failure(locks.createLock('auth').acquire({ timeout: 10_000 }));
    expect(waited.retryable).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('no credentials on a server that wants them fails the same way', async () => {
    const locks = provider(server.url);
    const error = await failure(locks.createLock('auth').tryAcquire());
    expect(error.retryable).toBe(false);
  });

  it('the right credentials work', async () => {
    const locks = provider(server.url, { auth: { username: 'root', password: 'root-password' } });
    const handle = await locks.createLock('auth').tryAcquire();
    expect(handle).not.toBeNull();
    expect(await handle!.release()).toBe(true);
  });
});
