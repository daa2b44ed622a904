import { LockDeadlockError } from '@lockkit/core';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { lockError } from '../src/mysql-errors.js';
import { mysqlUrl, uniqueName } from './support.js';

describe('error mapping', () => {
  it('maps the server deadlock error (MariaDB 1213 / MySQL 3058) to LockDeadlockError', async () => {
    const [a, b] = [
      await mysql.createConnection(mysqlUrl()),
      await mysql.createConnection(mysqlUrl()),
    ];
    const [x, y] = [uniqueName('deadlock-x'), uniqueName('deadlock-y')];
    try {
      await a.query('DO GET_LOCK(?, 0)', [x]);
      await b.query('DO GET_LOCK(?, 0)', [y]);
      const first = a.query('SELECT GET_LOCK(?, 10)', [y]).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = b.query('SELECT GET_LOCK(?, 10)', [x]).catch((error: unknown) => error);
      // The server picks a victim at once; the victim lets go so the other wait ends too.
      const [failure, victim] = await Promise.race([
        first.then((value) => [value, a] as const),
        second.then((value) => [value, b] as const),
      ]);
      await victim.query('DO RELEASE_ALL_LOCKS()');
      await Promise.all([first, second]);
      expect(failure).toBeInstanceOf(Error);
      const mapped = lockError('orders', failure);
      expect(LockDeadlockError.isInstance(mapped)).toBe(true);
      expect(mapped).toMatchObject({ code: 'LOCK_DEADLOCK', lockName: 'orders' });
      expect((mapped as Error).cause).toBe(failure);
      expect([1213, 3058]).toContain((failure as unknown as { errno: number }).errno);
    } finally {
      await a.query('DO RELEASE_ALL_LOCKS()').catch(() => undefined);
      await b.query('DO RELEASE_ALL_LOCKS()').catch(() => undefined);
      await Promise.all([a.end(), b.end()]);
    }
  });

  it('maps other failures to BackendUnavailableError, keeping the cause', () => {
    const cause = Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' });
    expect(lockError('orders', cause)).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      lockName: 'orders',
      cause,
    });
  });
});
