import type { Capabilities } from '@lockkit/core';
import {
  type BackendLockState,
  delay,
  type Grant,
  type GrantData,
  type LockBackend,
  type LockRequest,
  memoizeKeys,
  now,
  type WaitContext,
} from '@lockkit/core/backend';
import { EtcdLeaseInvalidError } from 'etcd3';
import { BackgroundWork } from './background-work.js';
import { connect, type EtcdConnection, unavailable } from './etcd-connection.js';
import { exportEtcdGrant, moveOntoOurLease } from './etcd-hand-over.js';
import { etcdCapabilities, type ResolvedEtcdOptions } from './etcd-options.js';
import type { LeaseSession } from './lease-session.js';
import { breakQueue, holdRecord, inspectQueue } from './lock-admin.js';
import { ContenderNames, lockPrefix } from './lock-keys.js';
import { decide } from './lock-queue.js';
import { OwnKeyWatch } from './own-key-watch.js';
import {
  enterQueue,
  leaveQueue,
  listQueue,
  markGranted,
  type QueueListing,
  removeOwnKey,
} from './queue-store.js';
import { QueueWait } from './queue-wait.js';
import { SessionSupervisor } from './session-supervisor.js';

/** An etcd grant: our key in the lock's queue, and the session (lease) it is attached to. */
export interface EtcdGrant extends Grant {
  /** Our key. */
  readonly key: string;
  /** The lock's queue prefix. */
  readonly prefix: string;
  /** Our key's create revision (also the fencing token). */
  readonly createRevision: bigint;
  readonly session: LeaseSession;
  readonly watch: OwnKeyWatch;
}

/** Thrown inside an acquire when its session (or its key) went away: start over. */
class SessionGone extends Error {}

/**
 * The etcd {@link LockBackend}: queue recipes (lock-queue.ts) on keys attached to one lease per
 * provider, ordered by create revision (the fencing token). `tryAcquire` waits in the queue (a
 * watch on the one key or range that matters) until granted, the deadline or abort.
 */
export class EtcdLockBackend implements LockBackend<EtcdGrant> {
  readonly backend = 'etcd';
  readonly capabilities: Capabilities;
  readonly pollIntervalMs: number;
  readonly connection: EtcdConnection;
  readonly sessions: SessionSupervisor;
  readonly #options: ResolvedEtcdOptions;
  readonly #background = new BackgroundWork();
  /** Ends the "in use" mark of each grant (see SessionSupervisor.use). */
  readonly #holds = new WeakMap<EtcdGrant, () => void>();
  readonly #prefixOf: (request: LockRequest) => string;
  readonly #names = new ContenderNames();

  constructor(options: ResolvedEtcdOptions) {
    this.#options = options;
    this.capabilities = etcdCapabilities(options);
    this.pollIntervalMs = options.pollIntervalMs;
    this.connection = connect(options);
    this.sessions = new SessionSupervisor(this.connection, options);
    this.#prefixOf = memoizeKeys((request) =>
      lockPrefix(options.keyPrefix, request.namespace, request.kind, request.name),
    );
  }

  /** The queue prefix of `request`'s lock. */
  prefixOf(request: LockRequest): string {
    return this.#prefixOf(request);
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<EtcdGrant | null> {
    const done = this.sessions.use();
    const attempt = this.#acquire(request, wait);
    attempt.then(done, done);
    return attempt;
  }

  async release(_request: LockRequest, grant: EtcdGrant): Promise<boolean> {
    grant.watch.close();
    const { session } = grant;
    const held = this.#holds.get(grant);
    try {
      if (session.lost) return false; // the key ends with the lease
      const removed = await leaveQueue(
        this.connection.client,
        grant.key,
        grant.createRevision,
        now() + this.#options.commandTimeoutMs,
      );
      session.answered(true);
      if (removed) this.#names.giveBack(grant.key);
      return removed;
    } catch (error) {
      session.answered(false);
      this.#removeLater(session, grant.key, grant.createRevision);
      throw unavailable('release', error, this.connection.address);
    } finally {
      held?.();
    }
  }

  inspect(request: LockRequest): Promise<BackendLockState> {
    return inspectQueue(this.connection, this.#prefixOf(request), request, this.#options);
  }

  forceRelease(request: LockRequest): Promise<number> {
    return breakQueue(this.connection, this.#prefixOf(request), request, this.#options);
  }

  monitor(
    _request: LockRequest,
    grant: EtcdGrant,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void {
    const lost = (reason: string, cause?: unknown): void => {
      this.#holds.get(grant)?.(); // nothing is held any more
      lose(reason, cause);
    };
    const stopSession = grant.session.onLost(lost);
    grant.watch.attach(lost);
    return () => {
      stopSession();
      grant.watch.attach(undefined);
    };
  }

  exportGrant(_request: LockRequest, grant: EtcdGrant): GrantData {
    return exportEtcdGrant(grant, this.sessions, this.#holds.get(grant)); // etcd-hand-over.ts
  }
  async resumeGrant(request: LockRequest, data: GrantData, rev: bigint): Promise<EtcdGrant | null> {
    const session = await moveOntoOurLease(this, this.#options, request, data, rev);
    return session && this.#grant(session, this.#prefixOf(request), data['key'] as string, rev);
  }

  /** Within the command timeout: clean-up still running gets its chance, and the session's lease
   * is revoked (deleting the keys left on it) if etcd answered the last request and no hold was
   * exported; otherwise it runs out on the server by itself. Then an owned client is closed. */
  async close(): Promise<void> {
    const closing = this.sessions.use(); // keep the process alive until close() is done
    try {
      const deadline = now() + this.#options.commandTimeoutMs;
      await this.#background.drain(Math.max(0, deadline - now()));
      await this.sessions.close(deadline);
    } finally {
      closing();
      if (this.connection.owned) this.connection.client.close();
    }
  }

  async #acquire(request: LockRequest, wait: WaitContext): Promise<EtcdGrant | null> {
    for (let round = 1; ; round++) {
      if (wait.signal.aborted) return null;
      const deadline = now() + this.#options.commandTimeoutMs;
      const session = await this.sessions.current(deadline);
      try {
        return await this.#acquireOn(session, request, wait, deadline);
      } catch (error) {
        if (wait.signal.aborted) return null;
        const sessionEnded = error instanceof SessionGone || session.lost !== undefined;
        if (!(sessionEnded && round < 3 && now() < wait.deadline)) {
          const cause = error instanceof SessionGone ? error.cause : error;
          throw unavailable('acquire', cause, this.connection.address);
        }
      }
    }
  }

  async #acquireOn(
    session: LeaseSession,
    request: LockRequest,
    wait: WaitContext,
    deadline: number,
  ): Promise<EtcdGrant | null> {
    const { client } = this.connection;
    const prefix = this.#prefixOf(request);
    const key = this.#names.take(prefix, request.kind, request.permits);
    const record = holdRecord(request.owner, Date.now()); // also the grant mark's value
    let entered: Awaited<ReturnType<typeof enterQueue>>;
    try {
      entered = await enterQueue(client, prefix, key, session.id, record, deadline);
      session.answered(true);
    } catch (error) {
      if (error instanceof EtcdLeaseInvalidError) {
        // Revoked or expired before our keepalive noticed: a new session, and start over.
        session.lose('the etcd lease expired or was revoked', error);
        throw gone('the etcd lease expired or was revoked', error);
      }
      session.answered(false);
      this.#removeLater(session, key, undefined); // in case it got through unanswered
      throw error;
    }
    const { createRevision } = entered;
    const once = wait.deadline === Number.NEGATIVE_INFINITY;
    let listing: QueueListing = entered;
    let queueWait: QueueWait | undefined;
    let granted = false;
    try {
      for (;;) {
        if (session.lost) throw gone(session.lost.reason, session.lost.cause);
        const decision = decide(request.kind, request.maxCount, listing.queue, key);
        if (decision.action === 'missing') throw gone('our lock key disappeared while waiting');
        if (decision.action === 'granted') {
          if (wait.signal.aborted) return null;
          if (request.kind === 'semaphore' && queueWait && decision.successors > 0) {
            // Tell the waiter behind us (which watches our key) that we moved up. Not awaited:
            // if it fails, that waiter still wakes at its next poll or when we release.
            const markDeadline = now() + this.#options.commandTimeoutMs;
            markGranted(client, key, createRevision, record, markDeadline).catch(() => undefined);
          }
          granted = true;
          return this.#grant(session, prefix, key, createRevision);
        }
        if (once || wait.signal.aborted) return null;
        wait.waiting();
        queueWait ??= new QueueWait(client, session, prefix, this.#options.pollIntervalMs);
        queueWait.follow(decision, listing.revision);
        await queueWait.next(wait.signal);
        if (wait.signal.aborted) return null;
        try {
          listing = await listQueue(client, prefix, now() + this.#options.commandTimeoutMs);
          session.answered(true);
        } catch {
          // Keep our place (the session decides whether we still have it) and our watch;
          // look again at the next notification or poll.
          session.answered(false);
        }
      }
    } finally {
      queueWait?.close();
      if (!granted) await this.#withdraw(session, key, createRevision);
    }
  }

  /** Our key's grant, now held: from now on a deletion of the key is the loss of the lock. */
  #grant(session: LeaseSession, prefix: string, key: string, createRevision: bigint): EtcdGrant {
    const { client } = this.connection;
    const watch = new OwnKeyWatch(client, key, createRevision, this.#options.commandTimeoutMs);
    // Watched from a third of the lease (at most 1 s) on: within the bound, free for short holds.
    watch.start(Math.min(1000, session.ttlMs / 3));
    const grant = { fencingToken: createRevision, key, prefix, createRevision, session, watch };
    this.#holds.set(grant, this.sessions.use()); // ended by release, loss or export
    return grant;
  }

  /** Deletes our key after giving up (in the background if etcd does not answer). */
  async #withdraw(session: LeaseSession, key: string, createRevision: bigint): Promise<void> {
    if (session.lost) return; // the key ends with the lease
    if (!session.responsive) {
      // Do not hold the caller up on a server that does not answer.
      this.#removeLater(session, key, createRevision);
      return;
    }
    try {
      const deadline = now() + this.#options.commandTimeoutMs;
      const removed = await leaveQueue(this.connection.client, key, createRevision, deadline);
      if (removed) this.#names.giveBack(key);
    } catch {
      session.answered(false);
      this.#removeLater(session, key, createRevision);
    }
  }

  /** Deletes our key in the background, until it is gone or its session ends. */
  #removeLater(session: LeaseSession, key: string, createRevision: bigint | undefined): void {
    const { client } = this.connection;
    const timeoutMs = this.#options.commandTimeoutMs;
    this.#background.run(async (stop) => {
      while (!session.lost) {
        try {
          const deadline = now() + timeoutMs;
          if (createRevision === undefined) await removeOwnKey(client, key, deadline);
          else await leaveQueue(client, key, createRevision, deadline);
          return;
        } catch {
          if (stop.aborted) return;
          await delay(this.#options.pollIntervalMs, stop).catch(() => undefined);
        }
      }
    });
  }
}

function gone(reason: string, cause?: unknown): SessionGone {
  return new SessionGone(reason, { cause: cause ?? new Error(reason) });
}
