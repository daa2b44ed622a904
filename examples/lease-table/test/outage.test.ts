import { BackendUnavailableError, type Capabilities } from '@lockkit/core';
import { findFreePort, type ServerHandle, startPostgres } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeaseTableLockProvider } from '../src/index.js';
import { testOptions } from './test-options.js';

// The backend's half of the outage policy (docs/writing-a-backend.md, "When the server cannot
// be reached"): every call that cannot reach the server fails with BackendUnavailableError,
// naming the address, within capabilities.unavailableMs; release() and close() stay bounded.
// This file pauses its own server, so the shared one of the conformance suite is not touched.
const scale = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);
let server: ServerHandle;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(() => server?.stop());

/** Resolves with how long `work` took to settle (settled either way). */
async function settleTime(work: Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work.catch(() => undefined);
  return performance.now() - started;
}

describe('when PostgreSQL cannot be reached', () => {
  it('a refused connection fails tryAcquire with BackendUnavailableError naming the address', async () => {
    const port = await findFreePort();
    const provider = createLeaseTableLockProvider({
      connection: `postgres://postgres@127.0.0.1:${port}/postgres`,
      ...testOptions,
    });
    const attempt = provider.createLock('refused').tryAcquire();
    await expect(attempt).rejects.toBeInstanceOf(BackendUnavailableError);
    const error = (await attempt.catch((caught: unknown) => caught)) as BackendUnavailableError;
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.cause).toBeInstanceOf(Error);
    await provider.close();
  });

  it('a hung server: tryAcquire fails, release resolves false, close resolves, each in bound', async () => {
    const provider = createLeaseTableLockProvider({ connection: server.url, ...testOptions });
    const bound = (provider.capabilities as Capabilities & { readonly unavailableMs: number })
      .unavailableMs;
    const held = await provider.createLock('hung').acquire();
    // Idle pooled connections and the LISTEN connection: a graceful end would wait for the
    // paused server to close them.
    const warm = ['a', 'b', 'c', 'd'].map((name) => provider.createLock(`warm-${name}`).acquire());
    await Promise.all((await Promise.all(warm)).map((handle) => handle.release()));
    expect(await provider.createLock('hung').tryAcquire({ timeout: 50 })).toBeNull();
    await server.pause();
    try {
      const attempt = provider.createLock('hung-other').tryAcquire();
      expect(await settleTime(attempt)).toBeLessThan((bound + 250) * scale);
      await expect(attempt).rejects.toBeInstanceOf(BackendUnavailableError);
      const release = held.release();
      expect(await settleTime(release)).toBeLessThan((bound + 250) * scale);
      expect(await release).toBe(false);
      expect(held.signal.aborted).toBe(true);
      expect(await settleTime(provider.close())).toBeLessThan((bound + 250) * scale);
    } finally {
      await server.resume();
    }
  });
});
