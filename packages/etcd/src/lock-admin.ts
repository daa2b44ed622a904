/**
 * What a lock's keys record about their holds, and the operator's reading and break of a lock
 * (`lock.inspect()`, `lock.forceRelease()`). Each key's value is a small JSON record written
 * with the key (no request of its own): the provider's host and pid (for `lockkit inspect`),
 * its owner label, and when the hold began (`since`, `Date.now()` ms; a waiter's record is
 * written again when it is granted). Which keys hold the lock is decided by the same queue
 * recipe the contenders use; the fencing token is the key's create revision.
 *
 * @module
 */
import { hostname } from 'node:os';
import type { LockKind } from '@lockkit/core';
import type { BackendLockState, LockHolder, LockRequest } from '@lockkit/core/backend';
import type { Etcd3, IKeyValue } from 'etcd3';
import { type EtcdConnection, unavailable, until } from './etcd-connection.js';
import type { ResolvedEtcdOptions } from './etcd-options.js';
import { kindOfKey, permitsOfKey, prefixEnd } from './lock-keys.js';
import { decide, type QueueEntry } from './lock-queue.js';
import { leaveQueue } from './queue-store.js';

const host = hostname();

/** The value of a contender key: who wrote it, and since when it waits or holds. */
export function holdRecord(owner: string | undefined, since: number): Buffer {
  return Buffer.from(JSON.stringify({ host, pid: process.pid, owner, since }));
}

/** A key's owner label and `since`, where its record has them (older clients: neither). */
function readRecord(value: Buffer): { owner: string | undefined; since: number | undefined } {
  let record: { owner?: unknown; since?: unknown } = {};
  try {
    record = JSON.parse(value.toString()) as typeof record;
  } catch {
    // not a record lockkit wrote: nothing known
  }
  return {
    owner: typeof record.owner === 'string' ? record.owner : undefined,
    since: typeof record.since === 'number' ? record.since : undefined,
  };
}

interface Contender extends QueueEntry {
  readonly kv: IKeyValue;
}

/** The largest number of holds a contender of `kind` shares the lock with. */
function maxCountOf(kind: LockKind, request: LockRequest): number {
  if (kind === 'read') return Number.POSITIVE_INFINITY;
  return kind === 'semaphore' ? request.maxCount : 1;
}

/** The queue at `prefix`, values included, split into holders and waiters (one reading). */
async function readQueue(
  client: Etcd3,
  prefix: string,
  request: LockRequest,
  deadline: number,
): Promise<{ holders: Contender[]; waiters: number }> {
  const response = await client.kv.range(
    {
      key: Buffer.from(prefix),
      range_end: prefixEnd(prefix),
      sort_order: 'Ascend',
      sort_target: 'Create',
    },
    until(deadline),
  );
  const queue: Contender[] = [];
  for (const kv of response.kvs) {
    const key = kv.key.toString();
    const kind = kindOfKey(prefix, key);
    if (!kind) continue;
    const permits = permitsOfKey(prefix, key);
    queue.push({ kv, key, kind, permits, createRevision: BigInt(kv.create_revision) });
  }
  const holders = queue.filter(
    (entry) =>
      decide(entry.kind, maxCountOf(entry.kind, request), queue, entry.key).action === 'granted',
  );
  return { holders, waiters: queue.length - holders.length };
}

/** One administrative request within the command timeout; failures are `BackendUnavailableError`. */
async function ask<T>(
  connection: EtcdConnection,
  what: string,
  options: ResolvedEtcdOptions,
  run: (client: Etcd3, deadline: number) => Promise<T>,
): Promise<T> {
  try {
    return await run(connection.client, performance.now() + options.commandTimeoutMs);
  } catch (error) {
    throw unavailable(what, error, connection.address);
  }
}

/** Every hold of the lock at `prefix` and how many wait, for `inspect()`. */
export function inspectQueue(
  connection: EtcdConnection,
  prefix: string,
  request: LockRequest,
  options: ResolvedEtcdOptions,
): Promise<BackendLockState> {
  return ask(connection, 'inspect', options, (client, deadline) =>
    readHolds(client, prefix, request, deadline),
  );
}

async function readHolds(
  client: Etcd3,
  prefix: string,
  request: LockRequest,
  deadline: number,
): Promise<BackendLockState> {
  const { holders, waiters } = await readQueue(client, prefix, request, deadline);
  return {
    holders: holders.map(
      (entry): LockHolder => ({
        kind: entry.kind,
        fencingToken: entry.createRevision,
        permits: entry.permits ?? 1,
        ...readRecord(entry.kv.value),
        // A hold lasts as long as its provider's session (lease), kept alive for it.
        validUntil: Number.POSITIVE_INFINITY,
      }),
    ),
    waiting: waiters,
  };
}

/**
 * Deletes the key of every current hold of the lock at `prefix`, each only if it is still the
 * key that was read (its create revision), never a waiter's: the holders' own-key watches
 * report the deletion. Resolves how many keys were deleted.
 */
export function breakQueue(
  connection: EtcdConnection,
  prefix: string,
  request: LockRequest,
  options: ResolvedEtcdOptions,
): Promise<number> {
  return ask(connection, 'forceRelease', options, async (client, deadline) => {
    const { holders } = await readQueue(client, prefix, request, deadline);
    const removed = await Promise.all(
      holders.map((entry) => leaveQueue(client, entry.key, entry.createRevision, deadline)),
    );
    return removed.filter(Boolean).length;
  });
}
