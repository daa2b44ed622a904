import type { Capabilities, LockKind } from '@lockkit/core';
import {
  type BackendLockState,
  ContentionMemo,
  type Grant,
  type LockBackend,
  type LockRequest,
  now,
  type WaitContext,
} from '@lockkit/core/backend';
import { ownConnections, pooledConnections } from './connection-sources.js';
import { FencingBlocks } from './fencing-blocks.js';
import {
  FencingByServer,
  type FencingCounter,
  FencingSequence,
  FencingTable,
} from './fencing-counter.js';
import { breakHolds, inspectHolds } from './hold-admin.js';
import { forgetHold, onBroken, recordHold } from './hold-records.js';
import type { AlgorithmContext, Held, LockAlgorithm } from './lock-algorithm.js';
import type { LockConnection } from './lock-connection.js';
import { LockConnections } from './lock-connections.js';
import { type LockKeys, lockKeys } from './lock-keys.js';
import { mutexAlgorithm } from './mutex-algorithm.js';
import { lockError, withAddress } from './mysql-errors.js';
import type { ResolvedMySqlOptions } from './mysql-lock-options.js';
import { readAlgorithm, writeAlgorithm } from './read-write-algorithm.js';
import { releaseAndWake } from './release-and-wake.js';
import { semaphoreAlgorithm } from './semaphore-algorithm.js';
import { WaitLine } from './wait-line.js';
import { weightedAlgorithm } from './weighted-algorithm.js';

/** A MySQL grant: the session that holds it and the `GET_LOCK` name held there. */
export interface MySqlGrant extends Grant {
  readonly connection: LockConnection;
  readonly key: string;
  /** Queue lock whose holder is woken on release (semaphore and reader grants). */
  readonly wake: string | undefined;
  /** The other permit locks of a weighted semaphore grant (none otherwise). */
  readonly more?: readonly string[] | undefined;
  /** Set when an operator broke the hold; `lose` tells its monitor. */
  readonly state: { broken: boolean; lose?: ((reason: string) => void) | undefined };
}

const algorithms: Record<LockKind, LockAlgorithm> = {
  mutex: mutexAlgorithm,
  read: readAlgorithm,
  write: writeAlgorithm,
  semaphore: semaphoreAlgorithm,
};

/**
 * The `GET_LOCK` backend: one non-blocking attempt on a shared session; if the caller will
 * wait, a server-side wait on a session of its own (one per lock per provider; other local
 * waiters line up in-process). Lost = the holding session is gone.
 */
export class MySqlLockBackend implements LockBackend<MySqlGrant> {
  readonly backend = 'mysql';
  readonly capabilities: Capabilities;
  /** Unused in practice: every wait is server-side and ends only at the deadline or abort. */
  readonly pollIntervalMs = 1000;
  readonly connections: LockConnections;
  readonly #context: AlgorithmContext;
  readonly #line = new WaitLine();
  readonly #recordHolds: boolean;
  /** Locks whose last try failed a moment ago: a waiting acquire skips the try (one statement). */
  readonly #contended = new ContentionMemo();

  constructor(options: ResolvedMySqlOptions) {
    const source = options.pool
      ? pooledConnections(options.pool, options.connectTimeoutMs)
      : ownConnections(options.connection ?? {}, options.connectTimeoutMs);
    this.connections = new LockConnections(source, {
      sharedConnections: options.sharedConnections,
      idleConnections: options.idleConnections,
      sessionTimeoutSeconds: options.sessionTimeoutSeconds,
      connectTimeoutMs: options.connectTimeoutMs,
      keepalive: { intervalMs: options.keepaliveIntervalMs, timeoutMs: options.keepaliveTimeoutMs },
    });
    this.#recordHolds = options.recordHolds;
    this.#context = {
      connections: this.connections,
      fencing: fencingCounter(options),
      maxReaders: options.maxReaders,
      safetyPollMs: options.safetyPollMs,
    };
    this.capabilities = {
      crossProcess: true,
      handOver: false, // GET_LOCK holds belong to the connection
      leases: false,
      minLeaseMs: Number.POSITIVE_INFINITY, // a hold lasts as long as the session
      weightedPermits: true, // n permit locks; a waiting weighted request holds the gate
      inspection: true,
      fifo: false,
      lostDetectionMs: options.keepaliveIntervalMs + options.keepaliveTimeoutMs,
      abandonedReleaseMs: options.sessionTimeoutSeconds * 1000,
      // A server that cannot be reached fails the opening of a session (connectTimeoutMs) or,
      // on an open session, the statement (the keepalive's deadline); +250 ms of slack.
      unavailableMs:
        Math.max(
          options.connectTimeoutMs,
          options.keepaliveIntervalMs + options.keepaliveTimeoutMs,
        ) + 250,
    };
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<MySqlGrant | null> {
    return this.#acquire(request, wait).catch((error: unknown) => {
      throw withAddress(error, this.connections.address);
    });
  }

  async release(request: LockRequest, grant: MySqlGrant): Promise<boolean> {
    const { connection, key, wake, more } = grant;
    try {
      if (connection.lost || grant.state.broken) return false;
      return await releaseAndWake(connection, key, wake, more);
    } catch (error) {
      throw withAddress(lockError(request.name, error), this.connections.address);
    } finally {
      forgetHold(connection, key);
      connection.unhold(key);
      for (const other of more ?? []) connection.unhold(other);
      this.connections.settle(connection);
    }
  }

  monitor(
    _request: LockRequest,
    grant: MySqlGrant,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void {
    if (grant.state.broken) lose('the lock was force-released (forceRelease())');
    else grant.state.lose = lose;
    const stop = grant.connection.onLost(lose);
    return () => {
      grant.state.lose = undefined;
      stop();
    };
  }

  inspect(request: LockRequest): Promise<BackendLockState> {
    return this.#admin(request, (connection) =>
      inspectHolds(connection, request, this.#context.maxReaders),
    );
  }

  forceRelease(request: LockRequest): Promise<number> {
    // The holders' keepalives (by default as frequent as ours) get a second of slack.
    const graceMs = this.capabilities.lostDetectionMs + 1000;
    return this.#admin(request, (connection) =>
      breakHolds(connection, request, this.#context.maxReaders, graceMs),
    );
  }

  async #admin<T>(request: LockRequest, work: (connection: LockConnection) => Promise<T>) {
    let connection: LockConnection | undefined;
    try {
      connection = await this.connections.forWait();
      return await work(connection);
    } catch (error) {
      throw withAddress(lockError(request.name, error), this.connections.address);
    } finally {
      if (connection) this.connections.done(connection);
    }
  }

  /** Core calls this after every attempt and release it started has settled. */
  async close(): Promise<void> {
    await this.connections.close();
  }

  async #acquire(request: LockRequest, wait: WaitContext): Promise<MySqlGrant | null> {
    const algorithm = (request.permits ?? 1) > 1 ? weightedAlgorithm : algorithms[request.kind];
    const keys = lockKeys(request);
    const willWait = wait.deadline !== Number.NEGATIVE_INFINITY;
    const skipAttempt =
      willWait && algorithm.waitsInOneStatement && this.#contended.isContended(keys.base);
    if (!skipAttempt) {
      const attempted = await this.#onLiveSession(
        request,
        keys,
        () => this.connections.forAttempt(keys.base, algorithm.conflicts(keys)),
        (connection) => algorithm.attempt(this.#context, connection, request, keys),
        (connection) => this.connections.done(connection, keys.base),
      );
      if (attempted) return attempted;
      if (!willWait || now() >= wait.deadline) return null;
      this.#contended.markContended(keys.base);
    }
    if (!algorithm.announcesWaiting) wait.waiting();
    const leave = await this.#line.enter(keys.base, wait.signal).catch(() => undefined);
    if (!leave) return null;
    try {
      return await this.#onLiveSession(
        request,
        keys,
        () => this.connections.forWait(),
        (connection) => algorithm.wait(this.#context, connection, request, keys, wait),
        (connection) => this.connections.done(connection),
      );
    } finally {
      leave();
    }
  }

  /**
   * Runs `work` on a session from `take`. A session that died while idle (the server's
   * `wait_timeout`, a restart) fails its first statement; that is retried once on a new one.
   */
  async #onLiveSession(
    request: LockRequest,
    keys: LockKeys,
    take: () => LockConnection | Promise<LockConnection>,
    work: (connection: LockConnection) => Promise<Held | undefined>,
    done: (connection: LockConnection) => void,
  ): Promise<MySqlGrant | null> {
    for (let attempt = 0; ; attempt++) {
      const connection = await take();
      try {
        const held = await work(connection);
        return held ? await this.#grant(connection, request, keys, held) : null;
      } catch (error) {
        if (attempt > 0 || !connection.lost) throw error;
      } finally {
        done(connection);
      }
    }
  }

  /** Records the hold (owner, token, grant time) for inspect(); on failure gives it back. */
  async #grant(
    connection: LockConnection,
    request: LockRequest,
    keys: LockKeys,
    held: Held,
  ): Promise<MySqlGrant> {
    connection.hold(held.key);
    for (const other of held.more ?? []) connection.hold(other);
    const { key, wake, more } = held;
    const state: MySqlGrant['state'] = { broken: false };
    const grant = {
      fencingToken: held.token,
      connection,
      key,
      wake,
      state,
      ...(more ? { more } : {}),
    };
    if (!this.#recordHolds) return grant;
    try {
      await recordHold(connection, request, keys, key, held.token, more);
    } catch (error) {
      for (const name of [key, ...(more ?? [])]) connection.unhold(name);
      const names = [key, ...(more ?? [])];
      await connection
        .query(`DO ${names.map(() => 'RELEASE_LOCK(?)').join(', ')}`, names)
        .catch(() => undefined);
      throw lockError(request.name, error);
    }
    onBroken(connection, key, more ?? [], (reason) => {
      state.broken = true;
      state.lose?.(reason);
    });
    return grant;
  }
}

function fencingCounter({ fencing, fencingTable }: ResolvedMySqlOptions): FencingCounter {
  if (fencing === 'blocks') return new FencingBlocks(fencingTable);
  if (fencing === 'table') return new FencingTable(fencingTable);
  if (fencing === 'sequence') return new FencingSequence(fencingTable);
  return new FencingByServer(fencingTable);
}
