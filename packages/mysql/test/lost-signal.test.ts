import { spawnHolder } from '@lockkit/conformance';
import { LockLostError } from '@lockkit/core';
import {
  mariaDbLogin,
  type ServerHandle,
  type SessionSwappingProxy,
  startMariaDb,
  startSessionSwappingProxy,
} from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mutexKey } from '../src/index.js';
import {
  abortedWithin,
  eventually,
  holderOf,
  killConnection,
  ms,
  mysqlUrl,
  provider,
  statementsOf,
  uniqueName,
} from './support.js';

describe('lost signal', () => {
  it('KILL <id> of a multiplexed session aborts every handle on it and frees the locks', async () => {
    const locks = provider({ sharedConnections: 1 });
    const [a, b] = [uniqueName('kill-a'), uniqueName('kill-b')];
    const first = await locks.createLock(a).acquire();
    const second = await locks.createSemaphore(b, 2).acquire();
    const session = locks.connectionIdOf(first);
    expect(locks.connectionIdOf(second)).toBe(session);
    await killConnection(session);
    for (const handle of [first, second]) {
      const reason = await abortedWithin(handle.signal, ms(1000));
      expect(LockLostError.isInstance(reason)).toBe(true);
    }
    expect(await holderOf(mutexKey('', a))).toBeNull();
    const next = await provider().createLock(a).tryAcquire();
    expect(next?.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await first.release()).toBe(false);
    expect(await second.release()).toBe(false);
    expect(next?.signal.aborted).toBe(false);
    await next?.release();
  });

  it('a moved session is noticed by the next prepared statement: the signal fires, the attempt goes to a new session', async () => {
    await throughSwappingProxy(async (url, proxy) => {
      // The keepalive would notice only after a minute: the attempt's statement notices first.
      const locks = provider({
        connection: url,
        sharedConnections: 1,
        keepaliveIntervalMs: 60_000,
        sessionTimeoutSeconds: 120,
      });
      const held = await locks.createLock(uniqueName('moved-held')).acquire();
      const before = locks.connectionIdOf(held);
      await proxy.swap();
      const next = await locks.createLock(uniqueName('moved-next')).tryAcquire();
      expect(next).not.toBeNull();
      expect(locks.connectionIdOf(next!)).not.toBe(before);
      const reason = await abortedWithin(held.signal, ms(1000));
      expect(String((reason as Error).message)).toContain('prepared statements are gone');
      expect(await held.release()).toBe(false);
      await next!.release();
    });
  });

  it('a vanished client (SIGSTOPped, socket still open) is cut off by wait_timeout', async () => {
    const name = uniqueName('vanished');
    const child = await spawnHolder(
      {
        module: new URL('./child-provider.ts', import.meta.url).href,
        exportName: 'createProvider',
        env: { LOCKKIT_MYSQL_URL: mysqlUrl(), LOCKKIT_MYSQL_SESSION_TIMEOUT: '2' },
      },
      name,
      { kind: 'mutex', maxCount: 1 },
      ms(20_000),
    );
    try {
      expect(await provider().createLock(name).tryAcquire()).toBeNull();
      process.kill(child.pid, 'SIGSTOP');
      const stoppedAt = performance.now();
      const handle = await provider()
        .createLock(name)
        .acquire({ timeout: ms(6000) });
      // Not before the session timeout (2 s), not much after it.
      expect(performance.now() - stoppedAt).toBeGreaterThan(1500);
      expect(handle.fencingToken).toBeGreaterThan(child.fencingToken);
      await handle.release();
    } finally {
      await child.kill();
    }
  }, 30_000);

  it('idle sessions the server closed are replaced, not reported to the next caller', async () => {
    const locks = provider();
    const name = uniqueName('idle');
    const holder = await provider().createLock(name).acquire();
    const waiting = locks.createLock(name).acquire({ timeout: ms(5000) });
    await eventually(
      async () =>
        (await statementsOf(locks.connectionIds)).some((row) => row.info?.includes('GET_LOCK')),
      ms(5000),
      'the wait to reach the server',
    );
    await holder.release();
    await (await waiting).release();
    const before = locks.connectionIds;
    for (const id of before) await killConnection(id);
    const again = await locks.createLock(name).acquire({ timeout: ms(5000) });
    expect(before).not.toContain(locks.connectionIdOf(again));
    await again.release();
  });

  it('a pooler that moves the session to another one (changed CONNECTION_ID()) fires the signal', async () => {
    await throughSwappingProxy(async (url, proxy) => {
      const locks = provider({
        connection: url,
        keepaliveIntervalMs: 100,
        keepaliveTimeoutMs: 1000,
      });
      const name = uniqueName('pooler');
      const handle = await locks.createLock(name).acquire();
      const before = locks.connectionIdOf(handle);
      await proxy.swap();
      const reason = await abortedWithin(handle.signal, ms(3000));
      expect(LockLostError.isInstance(reason)).toBe(true);
      expect(String((reason as Error).message)).toContain(`CONNECTION_ID ${before} →`);
      expect(await handle.release()).toBe(false);
    });
  });

  it('a long server-side wait is not mistaken for a dead session by the keepalive', async () => {
    const locks = provider({
      sharedConnections: 1,
      keepaliveIntervalMs: 50,
      keepaliveTimeoutMs: 100,
    });
    const name = uniqueName('long-wait');
    const warm = await locks.createLock(uniqueName('warm')).acquire(); // starts the keepalive
    const session = locks.connectionIdOf(warm);
    await warm.release();
    const holder = await provider().createLock(name).acquire();
    const waiting = locks.createLock(name).acquire({ timeout: ms(5000) });
    await new Promise((resolve) => setTimeout(resolve, 600)); // many keepalive deadlines
    await holder.release();
    const handle = await waiting;
    expect(locks.connectionIdOf(handle)).toBe(session); // the waiting session survived
    await handle.release();
  });

  describe('on a server of its own', () => {
    let server: ServerHandle;
    beforeAll(async () => {
      server = await startMariaDb({ useEnvironment: false });
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('a frozen server is noticed by the keepalive deadline', async () => {
      const locks = provider({
        connection: server.url,
        keepaliveIntervalMs: 200,
        keepaliveTimeoutMs: 300,
      });
      expect(locks.capabilities.lostDetectionMs).toBe(500);
      const handle = await locks.createLock(uniqueName('frozen')).acquire();
      await server.pause();
      try {
        const started = performance.now();
        const reason = await abortedWithin(handle.signal, ms(2000));
        expect(LockLostError.isInstance(reason)).toBe(true);
        expect(performance.now() - started).toBeLessThanOrEqual(500 + ms(300));
      } finally {
        await server.resume();
      }
      expect(await handle.release()).toBe(false);
    });

    it('a server restart loses the hold, and tokens keep increasing from the durable counter', async () => {
      const name = uniqueName('restart');
      const before = provider({ connection: server.url });
      const held = await before.createLock(name).acquire();
      await server.restart();
      expect(LockLostError.isInstance(await abortedWithin(held.signal, ms(5000)))).toBe(true);
      expect(await held.release()).toBe(false);
      const after = await provider({ connection: server.url }).createLock(name).acquire();
      expect(after.fencingToken).toBeGreaterThan(held.fencingToken);
      await after.release();
    }, 60_000);

    it('a server crash right after grants does not hand their tokens out again (the default counter)', async () => {
      const name = uniqueName('crash');
      const locks = provider({ connection: server.url });
      let last = 0n;
      for (let i = 0; i < 5; i++) {
        const handle = await locks.createLock(name).acquire();
        last = handle.fencingToken;
        await handle.release();
      }
      await server.kill();
      await server.restart();
      const after = await provider({ connection: server.url }).createLock(name).acquire();
      expect(after.fencingToken).toBeGreaterThan(last);
      await after.release();
    }, 60_000);
  });
});

/** Runs `run` with a URL that reaches the test server through a session-swapping proxy. */
async function throughSwappingProxy(
  run: (url: string, proxy: SessionSwappingProxy) => Promise<void>,
): Promise<void> {
  const target = new URL(mysqlUrl());
  const proxy = await startSessionSwappingProxy(target.hostname, Number(target.port), mariaDbLogin);
  try {
    const via = new URL(target.href);
    via.hostname = '127.0.0.1';
    via.port = String(proxy.port);
    await run(via.href, proxy);
  } finally {
    await proxy.close();
  }
}
