import { InvalidArgumentError } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import mysql from 'mysql2';
import { describe, expect, it } from 'vitest';
import { createMySqlLockProvider, mutexKey } from '../src/index.js';
import type { MySqlGrant } from '../src/mysql-lock-backend.js';
import {
  adminQuery,
  eventually,
  holderOf,
  ms,
  mysqlUrl,
  provider,
  statementsOf,
  uniqueName,
} from './support.js';

describe('GET_LOCK mutex on MariaDB', () => {
  it('honours a sub-second timeout on the server (never rounded to 0 or to a second)', async () => {
    const name = uniqueName('subsecond');
    const holder = await provider().createLock(name).acquire();
    const contender = provider().createLock(name);
    for (const timeout of [150, 450]) {
      const started = performance.now();
      expect(await contender.tryAcquire({ timeout })).toBeNull();
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(timeout - 5);
      // Rounded up to a second would be 1000 ms. The call also waits for the server's reply
      // to its GET_LOCK (docs/contract.md: a timed-out call rejects once its wait ended), which
      // a loaded machine can delay by a few hundred ms.
      expect(elapsed).toBeLessThan(Math.min(timeout + ms(350), 1000 - 50));
    }
    await holder.release();
  });

  it('waits "forever" with a large positive GET_LOCK timeout (MariaDB: negative = NULL)', async () => {
    const name = uniqueName('forever');
    const holder = await provider().createLock(name).acquire();
    const waiter = provider();
    let settled = false;
    const waiting = waiter
      .createLock(name)
      .acquire()
      .finally(() => {
        settled = true;
      });
    await eventually(
      async () =>
        (await statementsOf(waiter.connectionIds)).some((row) =>
          /GET_LOCK\('mutex\.[^']+', 31536000\)/.test(row.info ?? ''),
        ),
      ms(5000),
      'the waiter to block in GET_LOCK(key, 31536000)',
    );
    expect(settled).toBe(false);
    await holder.release();
    const handle = await waiting;
    expect(await holderOf(mutexKey('', name))).toBe(waiter.connectionIdOf(handle));
    await handle.release();
  });

  it('never stacks a second grant on the session that holds the lock', async () => {
    const name = uniqueName('stacking');
    const locks = provider({ sharedConnections: 1 });
    const first = await locks.createLock(name).acquire();
    // On the server, GET_LOCK on the same session would succeed again; the provider must not try.
    expect(await locks.createLock(name).tryAcquire()).toBeNull();
    expect(await locks.createLock(name).tryAcquire({ timeout: 100 })).toBeNull();
    expect(await holderOf(mutexKey('', name))).toBe(locks.connectionIdOf(first));
    expect(await first.release()).toBe(true);
    // Released once = free: a stacked count would have kept it held.
    expect(await holderOf(mutexKey('', name))).toBeNull();
  });

  it('waits on a dedicated session, so releases of other locks are never stuck behind it', async () => {
    const locks = provider({ sharedConnections: 1 });
    const [blocked, other] = [uniqueName('blocked'), uniqueName('other')];
    const foreign = await provider().createLock(blocked).acquire();
    const mine = await locks.createLock(other).acquire();
    const waiting = locks.createLock(blocked).acquire({ timeout: ms(10_000) });
    await eventually(
      async () =>
        (await statementsOf(locks.connectionIds)).some((row) => row.info?.includes('GET_LOCK')),
      ms(5000),
      'the wait to reach the server',
    );
    const started = performance.now();
    expect(await mine.release()).toBe(true);
    expect(performance.now() - started).toBeLessThan(ms(200));
    await foreign.release();
    await (await waiting).release();
  });

  it('while a lock is contended, the next acquire waits on the server at once (no failed attempt first)', async () => {
    // Statements are counted on the provider's own sessions, borrowed from a pool we watch.
    const statements: string[] = [];
    const pool = mysql.createPool({ uri: mysqlUrl(), connectionLimit: 8 });
    pool.on('connection', (session) => {
      // Attempts go as prepared statements (execute), blocking waits as text (query).
      const { query, execute } = session;
      session.query = function (this: unknown, ...args: unknown[]) {
        statements.push(String(args[0]));
        return Reflect.apply(query, this, args);
      } as typeof session.query;
      session.execute = function (this: unknown, ...args: unknown[]) {
        statements.push(String(args[0]));
        return Reflect.apply(execute, this, args);
      } as typeof session.execute;
    });
    try {
      const name = uniqueName('contended');
      const holder = await provider().createLock(name).acquire();
      const waiter = provider({ pool });
      const blockedWaits = async () =>
        (await statementsOf(waiter.connectionIds)).filter((row) =>
          /GET_LOCK\('mutex\.[^']+', 31536000\)/.test(row.info ?? ''),
        ).length;
      const first = waiter.createLock(name).acquire();
      await eventually(async () => (await blockedWaits()) === 1, ms(5000), 'the first wait');
      const second = waiter.createLock(name).acquire(); // lines up behind the first, in-process
      await holder.release();
      const handles = [await first];
      await handles[0]!.release();
      handles.push(await second);
      await handles[1]!.release();
      expect(handles[1]!.fencingToken).toBeGreaterThan(handles[0]!.fencingToken);
      // Only the first acquire tried (`GET_LOCK(…, 0)`) before waiting; both waited on the server.
      const attempts = statements.filter((sql) => /GET_LOCK\(\?, 0\)/.test(sql));
      const waits = statements.filter((sql) => /GET_LOCK\(\?, \?\)/.test(sql));
      expect([attempts.length, waits.length]).toEqual([1, 2]);
      await waiter.close();
    } finally {
      await new Promise((resolve) => pool.end(resolve));
    }
  });

  it("release() reports the server's answer: false when the session no longer held the key", async () => {
    const name = uniqueName('release-answer');
    const handle = await provider().createLock(name).acquire();
    const { grant } = grantBehind<MySqlGrant>(handle);
    // Behind the provider's back, as a proxy that swapped the session would.
    await grant.connection.query('DO RELEASE_LOCK(?)', [grant.key]);
    expect(await handle.release()).toBe(false);
    const again = await provider().createLock(name).acquire();
    expect(await again.release()).toBe(true);
  });

  it('abort ends the server-side wait with KILL QUERY and leaves nothing held', async () => {
    const name = uniqueName('abort');
    const holder = await provider().createLock(name).acquire();
    const waiter = provider();
    const controller = new AbortController();
    const waiting = waiter.createLock(name).acquire({ signal: controller.signal });
    await eventually(
      async () =>
        (await statementsOf(waiter.connectionIds)).some((row) => row.info?.includes('GET_LOCK')),
      ms(5000),
      'the wait to reach the server',
    );
    controller.abort(new Error('enough'));
    await expect(waiting).rejects.toThrow('enough');
    await eventually(
      async () => (await statementsOf(waiter.connectionIds)).every((row) => row.info === null),
      ms(2000),
      'the waiting statement to end',
    );
    await holder.release();
    expect(await holderOf(mutexKey('', name))).toBeNull();
  });

  it('creates the fencing table on demand; tokens survive providers and stay per lock', async () => {
    const table = `fence_${Math.random().toString(36).slice(2, 10)}`;
    const exists = async () =>
      (
        await adminQuery<unknown[]>(
          'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
          [table],
        )
      ).length === 1;
    expect(await exists()).toBe(false);
    const [a, b] = [uniqueName('fence-a'), uniqueName('fence-b')];
    const tokens: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      const locks = createMySqlLockProvider({
        connection: mysqlUrl(),
        fencing: 'table',
        fencingTable: table,
      });
      const handle = await locks.createLock(a).acquire();
      tokens.push(handle.fencingToken);
      await handle.release();
      await locks.close();
    }
    expect(tokens).toEqual([1n, 2n, 3n]);
    const other = await provider({ fencing: 'table', fencingTable: table }).createLock(b).acquire();
    expect(other.fencingToken).toBe(1n);
    await other.release();
    const rows = await adminQuery<{ k: Buffer; t: number }[]>(
      `SELECT k, t FROM \`${table}\` ORDER BY t DESC`,
    );
    expect(rows.map((row) => [row.k.toString(), Number(row.t)])).toEqual([
      [mutexKey('', a), 3],
      [mutexKey('', b), 1],
    ]);
    await adminQuery(`DROP TABLE \`${table}\``);
  });

  it("fencing: 'sequence' draws increasing tokens from a MariaDB SEQUENCE created on demand", async () => {
    const sequence = `seq_${Math.random().toString(36).slice(2, 10)}`;
    const locks = provider({ fencing: 'sequence', fencingTable: sequence });
    const [a, b] = [uniqueName('seq-a'), uniqueName('seq-b')];
    const tokens: bigint[] = [];
    for (const name of [a, b, a, b]) {
      const handle = await locks.createLock(name).acquire();
      tokens.push(handle.fencingToken);
      await handle.release();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    const rows = await adminQuery<{ type: string }[]>(
      'SELECT TABLE_TYPE AS type FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [sequence],
    );
    expect(rows).toEqual([{ type: 'SEQUENCE' }]);
    await adminQuery(`DROP SEQUENCE \`${sequence}\``);
  });

  it("fencing: 'auto' draws from the sequence on MariaDB 10.3+ and never writes the table", async () => {
    const name = `auto_${Math.random().toString(36).slice(2, 10)}`;
    const locks = provider({ fencing: 'auto', fencingTable: name });
    const [a, b] = [uniqueName('auto-a'), uniqueName('auto-b')];
    const tokens: bigint[] = [];
    for (const lock of [a, b, a]) {
      const handle = await locks.createLock(lock).acquire();
      tokens.push(handle.fencingToken);
      await handle.release();
    }
    // One counter for all locks: the second lock's first token is past the first lock's.
    expect(tokens[1]!).toBeGreaterThan(tokens[0]!);
    expect(tokens[2]!).toBeGreaterThan(tokens[1]!);
    const rows = await adminQuery<{ type: string }[]>(
      'SELECT TABLE_TYPE AS type FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [name],
    );
    expect(rows).toEqual([{ type: 'SEQUENCE' }]);
    await adminQuery(`DROP SEQUENCE \`${name}\``);
  });

  it('validates options before any I/O', () => {
    const bad = [
      {},
      { connection: mysqlUrl(), pool: {} },
      { connection: 42 },
      { connection: mysqlUrl(), sharedConnections: 0 },
      { connection: mysqlUrl(), keepaliveIntervalMs: 1.5 },
      { connection: mysqlUrl(), sessionTimeoutSeconds: 2, keepaliveIntervalMs: 5000 },
      { connection: mysqlUrl(), fencingTable: 'x; DROP TABLE y' },
      { connection: mysqlUrl(), maxReaders: 0 },
      { connection: mysqlUrl(), fencing: 'counter' },
      { connection: mysqlUrl(), pool: undefined, timeoutMs: 5 },
      { pool: { getConnection: 'no' } },
      { connection: mysqlUrl(), connectTimeoutMs: 5 },
      { connection: mysqlUrl(), connectTimeoutMs: 1.5 },
      { connection: { uri: mysqlUrl(), connectTimeout: 1000 } },
      { connection: `${mysqlUrl()}?connectTimeout=1000` },
      { connection: mysqlUrl(), owner: 42 },
      { connection: mysqlUrl(), owner: '✓'.repeat(21_846) }, // 65 538 UTF-8 bytes
      { connection: mysqlUrl(), recordHolds: 'yes' },
    ];
    for (const options of bad) {
      expect(() => createMySqlLockProvider(options as never)).toThrow(InvalidArgumentError);
    }
  });

  it('accepts the provider option owner and passes it on to core', () => {
    const provider = createMySqlLockProvider({ connection: mysqlUrl(), owner: 'worker ✓' });
    expect(provider.owner).toBe('worker ✓');
  });

  it('declares unavailableMs as max(connectTimeoutMs, keepalive interval + timeout) + 250', () => {
    const locks = (options: object) =>
      createMySqlLockProvider({ connection: mysqlUrl(), ...options }).capabilities.unavailableMs;
    expect(locks({})).toBe(7250);
    expect(locks({ connectTimeoutMs: 9000 })).toBe(9250);
    expect(
      locks({ keepaliveIntervalMs: 1000, keepaliveTimeoutMs: 500, connectTimeoutMs: 800 }),
    ).toBe(1750);
  });
});
