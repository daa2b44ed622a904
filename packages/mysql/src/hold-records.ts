import type { LockRequest } from '@lockkit/core/backend';
import type { LockConnection } from './lock-connection.js';
import type { LockKeys } from './lock-keys.js';
import { ER_NO_SUCH_TABLE } from './mysql-errors.js';
import { OnDemand } from './on-demand.js';

/** The holds table: one row per `GET_LOCK` key, rewritten by each new holder of that key. */
export const HOLDS_TABLE = 'lockkit_holds';

/**
 * A row only means something while its session holds the key (`IS_USED_LOCK(k) = conn`), and
 * no hold outlives a restart, so the rows need no durability. On MariaDB they live in a
 * non-transactional Aria table: no log flush per grant (Aria repairs the table itself after a
 * crash). MySQL has no such engine that takes BLOBs and every row size, so InnoDB there.
 */
const ddl = (connection: LockConnection): string =>
  `CREATE TABLE IF NOT EXISTS ${HOLDS_TABLE} (` +
  'k VARBINARY(64) NOT NULL PRIMARY KEY, base VARBINARY(64) NOT NULL, ' +
  'kind VARCHAR(9) NOT NULL, token BIGINT UNSIGNED NOT NULL, owner BLOB NULL, ' +
  'since BIGINT NOT NULL, conn BIGINT UNSIGNED NOT NULL, broken TINYINT NOT NULL DEFAULT 0, ' +
  'more VARBINARY(4096) NULL, ' +
  'KEY base (base)) ' +
  (connection.mariadb ? 'ENGINE=Aria TRANSACTIONAL=0' : 'ENGINE=InnoDB');

const RECORD =
  `REPLACE INTO ${HOLDS_TABLE} (k, base, kind, token, owner, since, conn, broken, more) ` +
  'VALUES (?, ?, ?, ?, ?, ?, CONNECTION_ID(), 0, ?)';

/** What the keepalive of a session that recorded holds asks: its keys marked broken. */
export const BROKEN_KEYS: string =
  `(SELECT GROUP_CONCAT(k SEPARATOR ' ') FROM ${HOLDS_TABLE} ` +
  'WHERE conn = CONNECTION_ID() AND broken = 1)';

/** Creates the holds table once, when a statement finds it missing. */
const holdsTable = new OnDemand(ER_NO_SUCH_TABLE, (connection) =>
  connection.query(ddl(connection)),
);

/** Writes the row of a hold just granted on `connection` (owner, token, grant time). */
export async function recordHold(
  connection: LockConnection,
  request: LockRequest,
  keys: LockKeys,
  key: string,
  token: bigint,
  more: readonly string[] = [],
): Promise<void> {
  // A weighted grant's other permit locks ride on its row (`more`), so it is one hold.
  const values = [
    key,
    keys.base,
    request.kind,
    token.toString(),
    request.owner ?? null,
    Date.now(),
    more.length > 0 ? more.join(' ') : null,
  ] as never;
  await holdsTable.run(connection, () => connection.execute(RECORD, values));
  connection.brokenKeys ??= { query: BROKEN_KEYS, found: (found) => giveUp(connection, found) };
}

/** What to tell, and which other permit locks to let go, when an operator breaks a hold. */
interface BreakListener {
  readonly more: readonly string[];
  readonly tell: (reason: string) => void;
}

/** Per session: held key → its {@link BreakListener}. */
const breakListeners = new WeakMap<LockConnection, Map<string, BreakListener>>();

/** Calls `tell` once if the hold of `key` (and `more`) on `connection` is broken. */
export function onBroken(
  connection: LockConnection,
  key: string,
  more: readonly string[],
  tell: (reason: string) => void,
): void {
  const listeners = breakListeners.get(connection) ?? new Map<string, BreakListener>();
  breakListeners.set(connection, listeners);
  listeners.set(key, { more, tell });
}

/** Stops listening for a break of `key` (the grant is being released). */
export function forgetHold(connection: LockConnection, key: string): void {
  breakListeners.get(connection)?.delete(key);
}

/**
 * The keepalive found `keys` of this session marked broken: tells their grants (lost) and
 * releases them. Each key stays in `held` until its grant's release, so this session does
 * not take it again meanwhile (its late release must not free someone else's hold).
 */
function giveUp(connection: LockConnection, keys: readonly string[]): void {
  const listeners = breakListeners.get(connection);
  for (const key of keys) {
    const listener = listeners?.get(key);
    if (!listener || !connection.held.has(key)) continue;
    listeners?.delete(key);
    listener.tell('the lock was force-released (forceRelease())');
    const names = [key, ...listener.more];
    connection
      .query(`DO ${names.map(() => 'RELEASE_LOCK(?)').join(', ')}`, names)
      .catch(() => undefined);
  }
}

/** A hold row of a lock, with the session that holds its key now (NULL: nobody). */
export interface HoldRow {
  readonly k: Buffer | string;
  readonly kind: string;
  readonly token: number | string;
  readonly owner: Buffer | string | null;
  readonly since: number | string;
  readonly conn: number | string;
  readonly broken: number;
  /** A weighted grant's other permit locks, space-separated (NULL for one permit). */
  readonly more: Buffer | string | null;
  readonly holder: number | string | null;
}

/** Every row of a lock's keys; a row is live where `holder` equals its `conn`. */
export function readRows(connection: LockConnection, base: string): Promise<HoldRow[]> {
  return holdsTable.run(connection, () =>
    connection.query<HoldRow[]>(
      'SELECT k, kind, token, owner, since, conn, broken, more, IS_USED_LOCK(k) AS holder ' +
        `FROM ${HOLDS_TABLE} WHERE base = ?`,
      [base],
    ),
  );
}

/** Marks every live hold of a lock broken; resolves how many. */
export async function markBroken(connection: LockConnection, base: string): Promise<number> {
  const result = await holdsTable.run(connection, () =>
    connection.query<{ affectedRows: number }>(
      `UPDATE ${HOLDS_TABLE} SET broken = 1 ` +
        'WHERE base = ? AND broken = 0 AND IS_USED_LOCK(k) = conn',
      [base],
    ),
  );
  return result.affectedRows;
}
