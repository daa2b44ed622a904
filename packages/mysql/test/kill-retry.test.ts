/**
 * An aborted wait whose `KILL QUERY` missed (it reached the server while a statement queued
 * ahead of the wait ran, e.g. a keepalive, or before the wait had started) is killed again:
 * the wait ends, instead of blocking until the lock frees.
 */
import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { ownConnections } from '../src/connection-sources.js';
import { LockConnections } from '../src/lock-connections.js';
import { isInterrupted } from '../src/mysql-errors.js';
import { blockingStatement } from '../src/server-wait.js';
import { eventually, holderOf, ms, mysqlUrl, statementsOf, uniqueName } from './support.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function sessions(): Promise<LockConnections> {
  const connections = new LockConnections(ownConnections(mysqlUrl(), 5000), {
    sharedConnections: 2,
    idleConnections: 1,
    sessionTimeoutSeconds: 60,
    connectTimeoutMs: 5000,
    keepalive: { intervalMs: 60_000, timeoutMs: 10_000 },
  });
  cleanup.push(() => connections.close());
  return connections;
}

describe('a KILL QUERY that missed the wait', () => {
  it(
    'is sent again until the wait has ended; the lock stays with its holder',
    async () => {
      const key = uniqueName('kill-retry');
      const holder = await mysql.createConnection(mysqlUrl());
      cleanup.push(() => holder.end());
      await holder.query('SELECT GET_LOCK(?, 0)', [key]);

      const connections = await sessions();
      const connection = await connections.forWait();
      // A statement runs ahead of the wait (as a keepalive may), long enough for the first
      // KILL to land on it rather than on the wait.
      const ahead = connection.query(`DO SLEEP(${(0.3 * ms(1)).toFixed(3)})`);
      const controller = new AbortController();
      const wait = { signal: controller.signal, deadline: Number.POSITIVE_INFINITY, waiting() {} };
      const waiting = blockingStatement(connections, connection, wait, () =>
        connection.query<{ got: number | null }[]>('SELECT GET_LOCK(?, 3600) AS got', [key]),
      );
      controller.abort(new Error('gave up'));
      await ahead;
      const outcome = await waiting;
      // Ended by a KILL (GET_LOCK answers NULL, or the statement fails as interrupted), long
      // before its hour is up; the lock stays with its holder.
      const killed = outcome.ok ? outcome.value[0]?.got === null : isInterrupted(outcome.error);
      expect(killed, JSON.stringify(outcome)).toBe(true);
      expect(await holderOf(key)).toBe(holder.threadId);
      await eventually(
        async () => (await statementsOf([connection.id]))[0]?.info == null,
        ms(2000),
        'the waiting session runs nothing',
      );
      connections.done(connection);
    },
    ms(20_000),
  );
});
