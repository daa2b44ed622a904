/**
 * Hand-over on etcd (`capabilities.handOver`): a hold is a contender key, identified by its
 * create revision (the fencing token), on the exporting provider's session lease. Exporting
 * leaves the key where it is (the exporter no longer watches it, and its `close()` lets its
 * lease run out instead of revoking it); resuming moves the key onto the resumer's own lease
 * in one transaction that succeeds only while the key still has that create revision AND is
 * still on the exporter's lease — so a released, expired or forged hold is refused, and so is
 * a token that was already resumed.
 *
 * @module
 */
import { InvalidArgumentError } from '@lockkit/core';
import { type GrantData, type LockRequest, now } from '@lockkit/core/backend';
import { EtcdLeaseInvalidError } from 'etcd3';
import { type EtcdConnection, unavailable, until } from './etcd-connection.js';
import type { LeaseSession } from './lease-session.js';
import { kindOfKey, permitsOfKey } from './lock-keys.js';
import type { OwnKeyWatch } from './own-key-watch.js';
import type { SessionSupervisor } from './session-supervisor.js';

/** What resuming needs of the backend. */
export interface EtcdResumer {
  readonly connection: EtcdConnection;
  readonly sessions: SessionSupervisor;
  prefixOf(request: LockRequest): string;
}

/** The grant data of a token; stops watching the key here (it is handed on). */
export function exportEtcdGrant(
  grant: { readonly key: string; readonly session: LeaseSession; readonly watch: OwnKeyWatch },
  sessions: SessionSupervisor,
  endHold: (() => void) | undefined,
): GrantData {
  endHold?.();
  grant.watch.close();
  sessions.keepOnClose();
  return { key: grant.key, lease: grant.session.id };
}

/**
 * Moves an exported key onto our session's lease. Resolves that session, or `null` when the
 * key is not (any more) the exported hold.
 */
export async function moveOntoOurLease(
  resumer: EtcdResumer,
  options: { readonly commandTimeoutMs: number },
  request: LockRequest,
  data: GrantData,
  createRevision: bigint,
): Promise<LeaseSession | null> {
  const { key, lease } = data;
  const prefix = resumer.prefixOf(request);
  if (
    typeof key !== 'string' ||
    typeof lease !== 'string' ||
    !/^[1-9][0-9]*$/.test(lease) ||
    kindOfKey(prefix, key) !== request.kind ||
    permitsOfKey(prefix, key) !== (request.permits ?? 1)
  ) {
    throw new InvalidArgumentError(`Not an etcd hand-over token of "${request.name}"`);
  }
  const { sessions } = resumer;
  const { client, address } = resumer.connection;
  const done = sessions.use();
  try {
    const deadline = now() + options.commandTimeoutMs;
    const session = await sessions.current(deadline);
    try {
      const response = await client.kv.txn(
        {
          compare: [
            {
              key: Buffer.from(key),
              target: 'Create',
              result: 'Equal',
              create_revision: createRevision.toString(),
            },
            { key: Buffer.from(key), target: 'Lease', result: 'Equal', lease },
          ],
          success: [
            { request_put: { key: Buffer.from(key), ignore_value: true, lease: session.id } },
          ],
        },
        until(deadline),
      );
      session.answered(true);
      return response.succeeded ? session : null;
    } catch (error) {
      if (error instanceof EtcdLeaseInvalidError) {
        session.lose('the etcd lease expired or was revoked', error);
      } else session.answered(false);
      throw unavailable('resume', error, address);
    }
  } finally {
    done();
  }
}
