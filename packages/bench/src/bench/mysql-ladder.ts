import { hostname } from 'node:os';
import mysql from 'mysql2/promise';
import type { Contender, LockClient } from './contender.js';

/**
 * The cost ladder of a contended MariaDB lock: hand-written mysql2 clients, each adding one of
 * lockkit's guarantees to the one before, so the difference between two rungs is what that
 * guarantee costs a hand-off. Every rung waits on the server (`GET_LOCK` with a timeout) and
 * releases with `RELEASE_LOCK`, as the raw peer does. After the wait, the second rung draws a
 * fencing token from a one-row `MEMORY` table (what lockkit's default `fencing: 'blocks'`
 * does per grant), the third also writes the inspection record (a `REPLACE` into a
 * non-transactional Aria table, as lockkit's `recordHolds` does), each in a round trip of its
 * own; the last sends the wait, the draw and the record as one multi-statement query, which
 * keeps the server's work and drops the round trips. The statements mirror lockkit's; they are
 * a measuring stick, not lockkit's code path.
 */

/** The ladder's own tables (not lockkit's), made on first use. */
export const LADDER_LIVE = 'ladder_fencing_live';
export const LADDER_HOLDS = 'ladder_holds';

const draw =
  `INSERT INTO ${LADDER_LIVE} (id, n) VALUES (1, LAST_INSERT_ID(1)) ` +
  'ON DUPLICATE KEY UPDATE n = LAST_INSERT_ID(n + 1)';
const record =
  `REPLACE INTO ${LADDER_HOLDS} (k, token, owner, since, conn) ` +
  'VALUES (?, LAST_INSERT_ID(), ?, ?, CONNECTION_ID())';
const batch =
  'SET @ladder_granted = GET_LOCK(?, 3600); ' +
  `INSERT INTO ${LADDER_LIVE} (id, n) SELECT 1, LAST_INSERT_ID(1) FROM DUAL WHERE @ladder_granted = 1 ` +
  'ON DUPLICATE KEY UPDATE n = LAST_INSERT_ID(n + 1); ' +
  `REPLACE INTO ${LADDER_HOLDS} (k, token, owner, since, conn) ` +
  'SELECT ?, LAST_INSERT_ID(), ?, ?, CONNECTION_ID() FROM DUAL WHERE @ladder_granted = 1; ' +
  'SELECT @ladder_granted AS granted';

/** What a rung does after its wait: nothing, the draw, or the draw and the record. */
type Step = 'wait' | 'draw' | 'record' | 'one query';

const rungs: readonly { readonly label: string; readonly step: Step }[] = [
  { label: 'GET_LOCK wait + RELEASE_LOCK', step: 'wait' },
  { label: '+ fencing draw (MEMORY row), own round trip', step: 'draw' },
  { label: '+ inspection record (Aria row), own round trip', step: 'record' },
  { label: 'the same three as one multi-statement query', step: 'one query' },
];

/** Creates the ladder's tables (idempotent). */
async function createLadderTables(connection: mysql.Connection): Promise<void> {
  await connection.query(
    `CREATE TABLE IF NOT EXISTS ${LADDER_LIVE} (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, ` +
      'n BIGINT UNSIGNED NOT NULL) ENGINE=MEMORY',
  );
  await connection.query(
    `CREATE TABLE IF NOT EXISTS ${LADDER_HOLDS} (k VARBINARY(64) NOT NULL PRIMARY KEY, ` +
      'token BIGINT UNSIGNED NOT NULL, owner BLOB NULL, since BIGINT NOT NULL, ' +
      'conn BIGINT UNSIGNED NOT NULL) ENGINE=Aria TRANSACTIONAL=0',
  );
}

/** The ladder's rungs as contenders on the server at `url`. */
export function mysqlLadder(url: string): Contender[] {
  return rungs.map(({ label, step }) => ({
    backend: 'mysql',
    library: label,
    lockkit: false,
    waits: true,
    holdsMany: true,
    async open(): Promise<LockClient> {
      const connection = await mysql.createConnection({
        uri: url,
        multipleStatements: step === 'one query',
      });
      await createLadderTables(connection);
      const owner = `${hostname()}:${process.pid}`;
      return {
        async acquire(name) {
          const key = `ladder:${name}`.slice(0, 64);
          if (step === 'one query') {
            const [results] = await connection.query(batch, [key, key, owner, Date.now()]);
            const answer = (results as unknown[])[3] as { granted: number | null }[];
            if (Number(answer[0]?.granted) !== 1) throw new Error(`${key}: not granted`);
          } else {
            await connection.query('SELECT GET_LOCK(?, 3600)', [key]);
            if (step !== 'wait') await connection.query(draw);
            if (step === 'record') await connection.execute(record, [key, owner, Date.now()]);
          }
          return () => connection.query('SELECT RELEASE_LOCK(?)', [key]);
        },
        close: () => connection.end(),
      };
    },
  }));
}
