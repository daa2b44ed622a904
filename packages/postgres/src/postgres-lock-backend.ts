import { BackendUnavailableError, type Capabilities } from '@lockkit/core';
import {
  type BackendLockState,
  ContentionMemo,
  type LockBackend,
  type LockRequest,
  memoizeKeys,
  type ReleaseWatch,
  type WaitContext,
  Wakeup,
} from '@lockkit/core/backend';
import { attemptLock, attemptSlot, forgetGrant } from './advisory-attempts.js';
import { requestKey } from './advisory-keys.js';
import { ConnectionMultiplexer } from './connection-multiplexer.js';
import { type ConnectionSource, ownClients, pooledClients } from './connection-source.js';
import { FencingSequence } from './fencing-sequence.js';
import { breakHolds, HoldAdmin, isBroken, monitorGrant } from './hold-admin.js';
import type { LoseFunction } from './lock-connection.js';
import { describeError, sqlStateOf, withAddress } from './pg-errors.js';
import type { PostgresGrant } from './postgres-grant.js';
import type { ResolvedPostgresOptions } from './postgres-lock-options.js';
import { ReleaseListener } from './release-listener.js';
import { waitOnServer } from './server-wait.js';
import { WeightedSlots } from './weighted-slots.js';

/**
 * PostgreSQL session-level advisory locks as a lockkit backend.
 *
 * - Mutex / writer: `pg_advisory_lock`, reader: `pg_advisory_lock_shared` on the same key;
 *   the server queues waiters in order and a queued writer makes new readers wait.
 * - Semaphore: N slot keys; a try takes any free slot, waiters LISTEN for the NOTIFY each
 *   release sends (plus core's safety poll). A weighted request takes the semaphore's gate,
 *   then all its slots at once, and keeps the gate while it waits (head of line).
 * - Each attempt first tries on a shared session; a caller who will wait then waits
 *   server-side on a session of its own, with `lock_timeout` and cancel requests. While a
 *   key's last try failed under a second ago, a caller who will wait skips the try.
 * - Lost: the session errors or ends, the keepalive misses its deadline, or the backend pid
 *   changed; the server freed the session's locks in every one of those cases.
 */
export class PostgresLockBackend implements LockBackend<PostgresGrant> {
  readonly backend = 'postgres';
  readonly capabilities: Capabilities;
  readonly pollIntervalMs: number;
  readonly connections: ConnectionMultiplexer;
  readonly sequence: FencingSequence;
  readonly #source: ConnectionSource;
  readonly #listener: ReleaseListener;
  readonly #waits = new Set<Promise<unknown>>();
  readonly #keyOf = memoizeKeys(requestKey);
  readonly #weighted: WeightedSlots;
  readonly #admin: HoldAdmin;
  /** Keys whose last try failed a moment ago: a waiting acquire skips the try (one statement). */
  readonly #contended = new ContentionMemo();

  constructor(options: ResolvedPostgresOptions) {
    this.pollIntervalMs = options.pollIntervalMs;
    this.#source = options.pool
      ? pooledClients(options.pool, options.connectTimeoutMs)
      : ownClients(options.connection!);
    this.sequence = new FencingSequence(
      options.fencingSequence,
      options.createFencingSequence,
      options.holdsTable,
      options.recordHolds,
    );
    const holds = this.sequence.holds;
    this.connections = new ConnectionMultiplexer(this.#source, {
      holds: {
        keepaliveText: () => holds.keepaliveText,
        broken: (connection, tokens) => breakHolds(connection, tokens, holds),
      },
      sharedConnections: options.sharedConnections,
      maxWaitConnections: options.maxWaitConnections,
      idleTimeoutMs: options.idleTimeoutMs,
      keepalive: { intervalMs: options.keepaliveIntervalMs, timeoutMs: options.keepaliveTimeoutMs },
      connectTimeoutMs: options.connectTimeoutMs,
    });
    this.#listener = new ReleaseListener(
      this.#source,
      options.idleTimeoutMs,
      options.connectTimeoutMs,
    );
    this.#weighted = new WeightedSlots(this.connections, this.sequence);
    this.capabilities = {
      inspection: true,
      crossProcess: true,
      handOver: false, // advisory locks belong to the session
      leases: false,
      minLeaseMs: Number.POSITIVE_INFINITY, // a hold lasts as long as the session
      weightedPermits: true, // n slots under the semaphore's gate, kept by a waiting request
      // Mutex and RW waits queue on the server, in order; semaphore waiters race on NOTIFY.
      fifo: false,
      // Session errors/ends are seen at once; a silent session is caught by the keepalive.
      lostDetectionMs: options.keepaliveIntervalMs + options.keepaliveTimeoutMs,
      // A killed process's socket closes, so the server frees its locks at once; semaphore
      // waiters only learn of it at their next safety poll (no NOTIFY from a dead session).
      abandonedReleaseMs: 1000 + Math.ceil(options.pollIntervalMs * 1.2),
      // A server that cannot be reached fails the opening of a session (connectTimeoutMs) or,
      // on an open session, the statement (the keepalive's deadline); +250 ms of slack.
      unavailableMs:
        Math.max(
          options.connectTimeoutMs,
          options.keepaliveIntervalMs + options.keepaliveTimeoutMs,
        ) + 250,
    };
    this.#admin = new HoldAdmin(
      this.connections,
      this.sequence,
      this.capabilities.lostDetectionMs + 1000,
    );
  }

  inspect(request: LockRequest): Promise<BackendLockState> {
    return this.#admin.inspect(request, this.#keyOf(request));
  }

  forceRelease(request: LockRequest): Promise<number> {
    return this.#admin.forceRelease(request, this.#keyOf(request));
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<PostgresGrant | null> {
    return this.#acquire(request, wait).catch((error: unknown) => {
      throw withAddress(error, this.connections.address);
    });
  }

  async #acquire(request: LockRequest, wait: WaitContext): Promise<PostgresGrant | null> {
    const requestKey = this.#keyOf(request);
    if (request.kind === 'semaphore') {
      if ((request.permits ?? 1) > 1) return this.#weighted.attempt(request, requestKey, wait);
      return attemptSlot(this.connections, this.sequence, request, requestKey);
    }
    const key = requestKey.text;
    const shared = request.kind === 'read';
    const willWait = wait.deadline !== Number.NEGATIVE_INFINITY;
    if (!willWait || !this.#contended.isContended(key)) {
      const granted = await attemptLock(this.connections, this.sequence, request, key, shared);
      if (granted || !willWait || wait.signal.aborted) return granted;
      this.#contended.markContended(key);
    }
    wait.waiting();
    const waiting = waitOnServer(this.connections, this.sequence, request, key, shared, wait);
    this.#waits.add(waiting);
    const forget = (): void => {
      this.#waits.delete(waiting);
    };
    waiting.then(forget, forget);
    return waiting;
  }

  watch(request: LockRequest): ReleaseWatch | Promise<ReleaseWatch> {
    if (request.kind === 'semaphore') {
      return this.#listener.watch(this.#keyOf(request).channel).catch((error: unknown) => {
        throw withAddress(error, this.connections.address);
      });
    }
    // Mutex and RW attempts wait on the server and end without a grant only at the
    // deadline; if one ever ends early, retry at once (the next attempt waits again).
    const wakeup = new Wakeup();
    wakeup.notify();
    return { next: (signal) => wakeup.next(signal), close: () => wakeup.close() };
  }

  async release(request: LockRequest, grant: PostgresGrant): Promise<boolean> {
    const { connection } = grant;
    if (isBroken(grant)) return false; // the keepalive unlocks it (an operator broke it)
    if (!connection.usable || connection.held.get(grant.key) !== grant) {
      forgetGrant(grant);
      return false;
    }
    const { holds } = this.sequence;
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const unlock = holds.unlockGrant(grant);
          const result = await connection.query<{ released: boolean }>(
            unlock.statement,
            unlock.values,
          );
          return result.rows[0]?.released === true;
        } catch (error) {
          // A server-side error (no transport failure) is retried once; after that the
          // session is dropped, which frees the lock for sure.
          if (attempt === 0 && sqlStateOf(error) !== undefined && connection.usable) continue;
          connection.fail(`unlocking "${request.name}" failed: ${describeError(error)}`, error);
          throw new BackendUnavailableError(
            `Releasing lock "${request.name}" on PostgreSQL at ${this.connections.address} failed: ${describeError(error)}`,
            { lockName: request.name, cause: error },
          );
        }
      }
    } finally {
      forgetGrant(grant);
    }
  }

  monitor(_request: LockRequest, grant: PostgresGrant, lose: LoseFunction): () => void {
    return monitorGrant(grant, lose);
  }

  async close(): Promise<void> {
    // Waits end promptly (core aborted them); let them finish their cancel + try-unlock.
    while (this.#waits.size > 0) await Promise.allSettled(this.#waits);
    while (this.#weighted.pending.size > 0) await Promise.allSettled(this.#weighted.pending);
    await this.#listener.close();
    await this.connections.close();
  }
}
