import { BackendUnavailableError } from '@lockkit/core';
import type { BackendLockState, LockHolder, LockRequest } from '@lockkit/core/backend';
import { type HoldRow, markBroken, readRows } from './hold-records.js';
import type { LockConnection } from './lock-connection.js';
import { type LockKeys, lockKeys } from './lock-keys.js';
import { ER_NO_SUCH_THREAD, errnoOf } from './mysql-errors.js';

/** Slots read for holds without a row (older clients, `recordHolds: false`). */
const MAX_SLOTS_READ = 256;
/** How often a break looks whether the holders have let go. */
const POLL_MS = 100;

/** The `GET_LOCK` names whose holders hold the lock (a writer's gate: only with its row). */
function holdKeys(request: LockRequest, keys: LockKeys, maxReaders: number): string[] {
  if (request.kind === 'mutex') return [keys.base];
  const count = request.kind === 'semaphore' ? request.maxCount : maxReaders;
  return Array.from({ length: Math.min(count, MAX_SLOTS_READ) }, (_, index) => keys.slot(index));
}

type Cell = number | string | null;
/** `waiting`, then `c<i>`: the session holding candidate key `i`. */
type HeldRow = { waiting: Cell } & Record<`c${number}`, Cell>;

interface Reading {
  /** Holds with a row: their session holds the key. */
  readonly recorded: { readonly row: HoldRow; readonly key: string }[];
  /** Keys held by a session without a row of that session. */
  readonly unrecorded: { readonly key: string; readonly session: number }[];
  readonly waiting: number | undefined;
}

/** One reading of a lock: rows, who holds each key, and the sessions waiting on its keys. */
async function read(
  connection: LockConnection,
  request: LockRequest,
  maxReaders: number,
): Promise<Reading> {
  const keys = lockKeys(request);
  const candidates = holdKeys(request, keys, maxReaders);
  // Waiters block in text statements (PROCESSLIST shows their keys) in state `User lock`.
  const needle = request.kind === 'mutex' ? `GET_LOCK('${keys.base}'` : `GET_LOCK('${keys.base}.`;
  const [rows, held] = await Promise.all([
    readRows(connection, keys.base),
    connection.query<HeldRow[]>(
      'SELECT (SELECT COUNT(*) FROM information_schema.PROCESSLIST ' +
        "WHERE STATE = 'User lock' AND LOCATE(?, INFO) > 0) AS waiting" +
        candidates.map((_, index) => `, IS_USED_LOCK(?) AS c${index}`).join(''),
      [needle, ...candidates],
    ),
  ]);
  const recorded: Reading['recorded'] = [];
  const withRow = new Set<string>();
  for (const row of rows) {
    if (row.holder === null || Number(row.holder) !== Number(row.conn)) continue;
    recorded.push({ row, key: row.k.toString() });
    withRow.add(row.k.toString());
    for (const other of moreOf(row)) withRow.add(other);
  }
  const unrecorded: Reading['unrecorded'] = [];
  candidates.forEach((key, index) => {
    const session = held[0]?.[`c${index}`];
    if (session != null && !withRow.has(key)) unrecorded.push({ key, session: Number(session) });
  });
  const waiting = held[0]?.waiting;
  return { recorded, unrecorded, waiting: waiting == null ? undefined : Number(waiting) };
}

/** `inspect()`: holds with their rows, holds without (token, owner, since unknown). */
export async function inspectHolds(
  connection: LockConnection,
  request: LockRequest,
  maxReaders: number,
): Promise<BackendLockState> {
  const reading = await read(connection, request, maxReaders);
  const slotKind = request.kind === 'write' ? 'read' : request.kind;
  const holders: LockHolder[] = [
    ...reading.recorded.map(({ row }) => ({
      kind: row.kind as LockHolder['kind'],
      fencingToken: BigInt(row.token),
      permits: 1 + moreOf(row).length,
      owner: row.owner === null ? undefined : row.owner.toString(),
      since: Number(row.since),
      validUntil: Number.POSITIVE_INFINITY,
    })),
    ...reading.unrecorded.map(() => ({
      kind: slotKind,
      fencingToken: undefined,
      permits: 1,
      owner: undefined,
      since: undefined,
      validUntil: Number.POSITIVE_INFINITY,
    })),
  ];
  return { holders, waiting: reading.waiting };
}

/**
 * `forceRelease()`: marks the recorded holds broken (each holder's keepalive gives up just
 * that hold), then waits until they are gone. A hold still there after `graceMs` (no row, or
 * a holder that does not answer) is ended by `KILL CONNECTION` of its session, which ends
 * every other lock that session holds too; the server frees a killed session's locks when
 * its thread ends, so the break waits for that too (another `graceMs` at most, then it
 * fails). Resolves how many holds it broke: when it does, they are all gone.
 */
export async function breakHolds(
  connection: LockConnection,
  request: LockRequest,
  maxReaders: number,
  graceMs: number,
): Promise<number> {
  const marked = await markBroken(connection, lockKeys(request).base);
  const first = await read(connection, request, maxReaders);
  const broken = marked + first.unrecorded.length;
  let until = Date.now() + graceMs;
  let killed = false;
  for (let reading = first; ; reading = await read(connection, request, maxReaders)) {
    const left = [
      ...reading.recorded.filter(({ row }) => row.broken === 1).map(({ row }) => Number(row.conn)),
      ...reading.unrecorded
        .filter(({ key }) => first.unrecorded.some((hold) => hold.key === key))
        .map(({ session }) => session),
    ].filter((session) => session !== connection.id);
    if (left.length === 0) return broken;
    if (Date.now() >= until) {
      if (killed) {
        throw new BackendUnavailableError(
          `forceRelease of lock "${request.name}": ${left.length} hold(s) still there after their sessions were killed`,
          { lockName: request.name },
        );
      }
      for (const session of new Set(left)) await kill(connection, session);
      killed = true;
      until = Date.now() + graceMs;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Ends `session`; one that ended meanwhile (unknown thread id) is fine. */
async function kill(connection: LockConnection, session: number): Promise<void> {
  try {
    await connection.query(`KILL CONNECTION ${session}`);
  } catch (error) {
    if (errnoOf(error) !== ER_NO_SUCH_THREAD) throw error;
  }
}

/** The other permit locks of a weighted grant's row. */
function moreOf(row: HoldRow): string[] {
  return row.more === null ? [] : row.more.toString().split(' ').filter(Boolean);
}
