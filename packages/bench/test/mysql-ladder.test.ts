import { type ServerHandle, startMariaDb } from '@lockkit/testkit';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LADDER_HOLDS, LADDER_LIVE, mysqlLadder } from '../src/bench/mysql-ladder.js';

// The MariaDB cost ladder (pnpm --filter @lockkit/bench mysql-costs) is only a measuring stick
// if each rung does what its label says: a lock whose second taker waits on the server until
// the first releases, and from its rung on a fencing draw per grant and an inspection record
// that carries the drawn token, whether sent one by one or as one query.
let server: ServerHandle;
let admin: mysql.Connection;

beforeAll(async () => {
  server = await startMariaDb({ useEnvironment: false });
  admin = await mysql.createConnection(server.url);
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

const labels = [
  'GET_LOCK wait + RELEASE_LOCK',
  '+ fencing draw (MEMORY row), own round trip',
  '+ inspection record (Aria row), own round trip',
  'the same three as one multi-statement query',
];

async function counter(): Promise<number> {
  const [rows] = await admin.query(`SELECT n FROM ${LADDER_LIVE} WHERE id = 1`);
  return Number((rows as { n: number }[])[0]?.n ?? 0);
}

async function recordOf(key: string): Promise<{ token: number; conn: number } | undefined> {
  const [rows] = await admin.query(`SELECT token, conn FROM ${LADDER_HOLDS} WHERE k = ?`, [key]);
  const row = (rows as { token: number; conn: number }[])[0];
  return row && { token: Number(row.token), conn: Number(row.conn) };
}

async function holderOf(key: string): Promise<number | null> {
  const [rows] = await admin.query('SELECT IS_USED_LOCK(?) AS holder', [key]);
  return (rows as { holder: number | null }[])[0]?.holder ?? null;
}

describe('the MariaDB cost ladder', () => {
  it('has the rungs its table prints, in order', () => {
    expect(mysqlLadder(server.url).map((rung) => rung.library)).toEqual(labels);
  });

  mysqlLadder('mysql://unused').forEach((_, index) => {
    it(`${labels[index]}: the second taker waits on the server; draw and record as labelled`, async () => {
      const rung = mysqlLadder(server.url)[index];
      if (!rung) throw new Error('no rung');
      const [first, second] = [await rung.open(), await rung.open()];
      try {
        const name = `rung-${index}`;
        const key = `ladder:${name}`;
        const before = await counter();
        const release = await first.acquire(name);
        const holder = await holderOf(key);
        let granted = false;
        const waiting = second.acquire(name).then((next) => {
          granted = true;
          return next;
        });
        // The waiter blocks in GET_LOCK on the server (PROCESSLIST: 'User lock').
        for (;;) {
          const [rows] = await admin.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE STATE = 'User lock' AND LOCATE(?, INFO) > 0",
            [key],
          );
          if (Number((rows as { n: number }[])[0]?.n) > 0) break;
        }
        expect(granted).toBe(false);
        await release();
        const releaseSecond = await waiting;
        const draws = index === 0 ? 0 : 2;
        expect(await counter()).toBe(before + draws);
        const recorded = await recordOf(key);
        if (index >= 2) {
          expect(recorded?.token).toBe(before + 2);
          expect(recorded?.conn).not.toBe(holder);
          expect(recorded?.conn).toBe(await holderOf(key));
        } else {
          expect(recorded).toBeUndefined();
        }
        await releaseSecond();
        expect(await holderOf(key)).toBeNull();
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });
  });
});
