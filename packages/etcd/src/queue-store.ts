/**
 * The requests on a lock's queue: enter it (create our key and list the queue in one
 * transaction), list it, leave it, and mark a semaphore grant. Every write is conditional on
 * our key's create revision, so a request that is sent again after a lost answer (the client
 * retries on another host) has the same effect as one that arrived once, and no request ever
 * touches a key that is not ours.
 *
 * @module
 */
import type { Etcd3, ICompare, IKeyValue, IRequestOp, ITxnResponse } from 'etcd3';
import { until } from './etcd-connection.js';
import { kindOfKey, permitsOfKey, prefixEnd } from './lock-keys.js';
import type { QueueEntry } from './lock-queue.js';

/** A consistent listing of a lock's queue. */
export interface QueueListing {
  readonly queue: readonly QueueEntry[];
  /** The store revision the listing was read at: watch from the next one. */
  readonly revision: bigint;
}

/** The queue after entering it, and our key's create revision. */
export interface Entered extends QueueListing {
  readonly createRevision: bigint;
}

function listOp(prefix: string): IRequestOp {
  return {
    request_range: {
      key: Buffer.from(prefix),
      range_end: prefixEnd(prefix),
      sort_order: 'Ascend',
      sort_target: 'Create',
      keys_only: true,
    },
  };
}

function queueOf(prefix: string, kvs: readonly IKeyValue[]): QueueEntry[] {
  const queue: QueueEntry[] = [];
  for (const kv of kvs) {
    const key = kv.key.toString();
    const kind = kindOfKey(prefix, key);
    if (!kind) continue;
    const permits = permitsOfKey(prefix, key);
    queue.push({ key, kind, permits, createRevision: BigInt(kv.create_revision) });
  }
  return queue;
}

function ownedBy(key: string, createRevision: bigint): { compare: ICompare[] } {
  return {
    compare: [
      {
        key: Buffer.from(key),
        target: 'Create',
        result: 'Equal',
        create_revision: createRevision.toString(),
      },
    ],
  };
}

function lastRange(response: ITxnResponse): readonly IKeyValue[] {
  const last = response.responses[response.responses.length - 1];
  return last?.response_range?.kvs ?? [];
}

/** Creates `key` on `leaseId` unless it exists, and lists the queue, in one transaction. */
export async function enterQueue(
  client: Etcd3,
  prefix: string,
  key: string,
  leaseId: string,
  value: Buffer,
  deadline: number,
): Promise<Entered> {
  const own = Buffer.from(key);
  const response = await client.kv.txn(
    {
      compare: [{ key: own, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: own, value, lease: leaseId } }, listOp(prefix)],
      failure: [{ request_range: { key: own } }, listOp(prefix)],
    },
    until(deadline),
  );
  const revision = BigInt(response.header.revision);
  // Created now: the transaction's revision is the key's create revision. Already there (our
  // own earlier try got through, its answer did not): read it.
  const existing = response.responses[0]?.response_range?.kvs[0];
  const createRevision = response.succeeded
    ? revision
    : BigInt(existing?.create_revision ?? revision);
  return { createRevision, revision, queue: queueOf(prefix, lastRange(response)) };
}

/** Lists the queue at `prefix`. */
export async function listQueue(
  client: Etcd3,
  prefix: string,
  deadline: number,
): Promise<QueueListing> {
  const op = listOp(prefix).request_range!;
  const response = await client.kv.range(op, until(deadline));
  return { queue: queueOf(prefix, response.kvs), revision: BigInt(response.header.revision) };
}

/** Deletes `key` if it is still the one created at `createRevision`; true if it was. */
export async function leaveQueue(
  client: Etcd3,
  key: string,
  createRevision: bigint,
  deadline: number,
): Promise<boolean> {
  const response = await client.kv.txn(
    {
      ...ownedBy(key, createRevision),
      success: [{ request_delete_range: { key: Buffer.from(key) } }],
    },
    until(deadline),
  );
  return response.succeeded;
}

/**
 * Writes `value` into our semaphore key again: the waiter behind us watches our key, and this
 * change tells it that we got a permit (so it may now be the first waiter).
 */
export async function markGranted(
  client: Etcd3,
  key: string,
  createRevision: bigint,
  value: Buffer,
  deadline: number,
): Promise<void> {
  await client.kv.txn(
    {
      ...ownedBy(key, createRevision),
      success: [{ request_put: { key: Buffer.from(key), value, ignore_lease: true } }],
    },
    until(deadline),
  );
}

/** Whether `key` still exists as created at `createRevision`, and the revision read at. */
export async function stillOwned(
  client: Etcd3,
  key: string,
  createRevision: bigint,
  deadline: number,
): Promise<{ owned: boolean; revision: bigint }> {
  const response = await client.kv.range(
    { key: Buffer.from(key), keys_only: true },
    until(deadline),
  );
  return {
    owned: response.kvs.some((kv) => BigInt(kv.create_revision) === createRevision),
    revision: BigInt(response.header.revision),
  };
}

/** Deletes our key whose create revision is unknown (its key name is ours alone). */
export async function removeOwnKey(client: Etcd3, key: string, deadline: number): Promise<void> {
  await client.kv.deleteRange({ key: Buffer.from(key) }, until(deadline));
}
