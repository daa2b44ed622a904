/**
 * What a lock node records about its hold, and the operator's reading and break of a lock
 * (`lock.inspect()`, `lock.forceRelease()`). Each node's data is a small JSON record written
 * by the create itself (no request of its own): the provider's owner label and when the node
 * was created (`since`, `Date.now()` ms). A semaphore holder that marks its node for the
 * waiter behind it writes the record again with `granted: true`. Which nodes hold the lock is
 * decided by the same queue recipe the contenders use; the fencing token is the node's czxid.
 *
 * @module
 */
import type { LockKind } from '@lockkit/core';
import type { BackendLockState, LockHolder, LockRequest } from '@lockkit/core/backend';
import { unavailable } from './lock-nodes.js';
import { ACQUIRED_MARKER, decide, type QueueNode, queueOf } from './lock-recipes.js';
import type { SessionSupervisor } from './session-supervisor.js';
import type { ZkSession } from './zk-session.js';
import { ZkCode, zkCode, zkLong } from './zookeeper-client.js';

interface HoldRecord {
  readonly owner?: unknown;
  readonly since?: unknown;
  readonly granted?: unknown;
}

/** The data of a contender node: its owner label, since when, and whether it holds. */
export function holdRecord(owner: string | undefined, since: number, granted = false): Buffer {
  return Buffer.from(JSON.stringify(granted ? { owner, since, granted } : { owner, since }));
}

function parseRecord(data: Buffer): HoldRecord {
  if (data.length === 0 || data[0] !== 0x7b) return {}; // older clients: empty or the marker
  try {
    return JSON.parse(data.toString()) as HoldRecord;
  } catch {
    return {};
  }
}

/** Whether a semaphore node's data says its contender holds a permit (marked). */
export function markedGranted(data: Buffer): boolean {
  return data.equals(ACQUIRED_MARKER) || parseRecord(data).granted === true;
}

function maxCountOf(kind: LockKind, request: LockRequest): number {
  if (kind === 'read') return Number.POSITIVE_INFINITY;
  return kind === 'semaphore' ? request.maxCount : 1;
}

/** The holders of the lock under `parent` and how many wait, from one listing. */
async function readQueue(
  session: ZkSession,
  parent: string,
  request: LockRequest,
): Promise<{ holders: QueueNode[]; waiters: number }> {
  let children: string[];
  try {
    children = await session.getChildren(parent);
  } catch (error) {
    if (zkCode(error) === ZkCode.NO_NODE) return { holders: [], waiters: 0 };
    throw error;
  }
  const queue = queueOf(children);
  const holders = queue.filter(
    (node) =>
      decide(node.kind, maxCountOf(node.kind, request), queue, node.name).action === 'granted',
  );
  return { holders, waiters: queue.length - holders.length };
}

/** Runs `work` on the provider's session; failures are `BackendUnavailableError`. */
async function onSession<T>(
  sessions: SessionSupervisor,
  what: string,
  work: (session: ZkSession) => Promise<T>,
): Promise<T> {
  let address = sessions.address;
  const done = sessions.use(); // keeps the session open while the work runs
  try {
    const session = sessions.current();
    address = session.address;
    return await work(session);
  } catch (error) {
    throw unavailable(what, error, address);
  } finally {
    done();
  }
}

/** Every hold of the lock under `parent` and how many wait, for `inspect()`. */
export function inspectQueue(
  sessions: SessionSupervisor,
  parent: string,
  request: LockRequest,
): Promise<BackendLockState> {
  return onSession(sessions, 'inspect', (session) => readHolds(session, parent, request));
}

async function readHolds(
  session: ZkSession,
  parent: string,
  request: LockRequest,
): Promise<BackendLockState> {
  const { holders, waiters } = await readQueue(session, parent, request);
  // Pipelined on the session: one round trip for all of them.
  const read = await Promise.all(holders.map((node) => session.readNode(`${parent}/${node.name}`)));
  const found: LockHolder[] = [];
  for (const [index, node] of holders.entries()) {
    const entry = read[index];
    if (!entry) continue; // released since the listing
    const record = parseRecord(entry.data);
    found.push({
      kind: node.kind,
      fencingToken: zkLong(entry.stat.czxid),
      permits: node.permits,
      owner: typeof record.owner === 'string' ? record.owner : undefined,
      since: typeof record.since === 'number' ? record.since : undefined,
      validUntil: Number.POSITIVE_INFINITY, // as long as the holder's session
    });
  }
  return { holders: found, waiting: waiters };
}

/**
 * Deletes the node of every current hold of the lock under `parent` (never a waiter's; a
 * sequential node's name is never reused, so the delete cannot hit a later contender). Each
 * holder's watch on its own node reports the deletion. Resolves how many nodes were deleted.
 */
export function breakQueue(
  sessions: SessionSupervisor,
  parent: string,
  request: LockRequest,
): Promise<number> {
  return onSession(sessions, 'forceRelease', async (session) => {
    const { holders } = await readQueue(session, parent, request);
    const removed = await Promise.all(
      holders.map((node) => session.remove(`${parent}/${node.name}`)),
    );
    return removed.filter(Boolean).length;
  });
}
