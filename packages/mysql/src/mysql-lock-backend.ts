import {
  type Capabilities,
  type Grant,
  type LockBackend,
  type LockKind,
  type LockRequest,
  now,
  type WaitContext,
} from '@lockkit/core';
import { ownConnections, pooledConnections } from './connection-sources.js';
import { FencingSequence, FencingTable } from './fencing-counter.js';
import type { AlgorithmContext, Held, LockAlgorithm } from './lock-algorithm.js';
import type { LockConnection } from './lock-connection.js';
import { LockConnections } from './lock-connections.js';
import { lockKeys } from './lock-keys.js';
import { mutexAlgorithm } from './mutex-algorithm.js';
import type { ResolvedMySqlOptions } from './mysql-lock-options.js';
import { readAlgorithm, writeAlgorithm } from './read-write-algorithm.js';
import { releaseAndWake } from './release-and-wake.js';
import { semaphoreAlgorithm } from './semaphore-algorithm.js';
import { WaitLine } from './wait-line.js';

/** A MySQL grant: the session that holds it and the `GET_LOCK` name held there. */
export interface MySqlGrant extends Grant {
  readonly connection: LockConnection;
  readonly key: string;
  /** Queue lock whose holder is woken on release (semaphore and reader grants). */
  readonly wake: string | undefined;
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
  readonly #inflight = new Set<Promise<unknown>>();

  constructor(options: ResolvedMySqlOptions) {
    const source = options.pool
      ? pooledConnections(options.pool)
      : ownConnections(options.connection ?? {});
    this.connections = new LockConnections(source, {
      sharedConnections: options.sharedConnections,
      idleConnections: options.idleConnections,
      sessionTimeoutSeconds: options.sessionTimeoutSeconds,
      keepalive: { intervalMs: options.keepaliveIntervalMs, timeoutMs: options.keepaliveTimeoutMs },
    });
    this.#context = {
      connections: this.connections,
      fencing:
        options.fencing === 'sequence'
          ? new FencingSequence(options.fencingTable)
          : new FencingTable(options.fencingTable),
      maxReaders: options.maxReaders,
      safetyPollMs: options.safetyPollMs,
    };
    this.capabilities = {
      crossProcess: true,
      leases: false,
      fifo: false,
      lostDetectionMs: options.keepaliveIntervalMs + options.keepaliveTimeoutMs,
      abandonedReleaseMs: options.sessionTimeoutSeconds * 1000,
    };
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<MySqlGrant | null> {
    const work = this.#acquire(request, wait);
    this.#inflight.add(work);
    void work.then(
      () => this.#inflight.delete(work),
      () => this.#inflight.delete(work),
    );
    return work;
  }

  async release(_request: LockRequest, grant: MySqlGrant): Promise<boolean> {
    const { connection, key, wake } = grant;
    try {
      if (connection.lost) return false;
      return await releaseAndWake(connection, key, wake);
    } finally {
      connection.unhold(key);
      this.connections.settle(connection);
    }
  }

  monitor(
    _request: LockRequest,
    grant: MySqlGrant,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void {
    return grant.connection.onLost(lose);
  }

  async close(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
    await this.connections.close();
  }

  async #acquire(request: LockRequest, wait: WaitContext): Promise<MySqlGrant | null> {
    const algorithm = algorithms[request.kind];
    const keys = lockKeys(request);
    const attempted = await this.#onLiveSession(
      () => this.connections.forAttempt(keys.base, algorithm.conflicts(keys)),
      (connection) => algorithm.attempt(this.#context, connection, request, keys),
      (connection) => this.connections.done(connection, keys.base),
    );
    if (attempted) return attempted;
    if (wait.deadline === Number.NEGATIVE_INFINITY || now() >= wait.deadline) return null;
    wait.waiting();
    const leave = await this.#line.enter(keys.base, wait.signal).catch(() => undefined);
    if (!leave) return null;
    try {
      return await this.#onLiveSession(
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
    take: () => Promise<LockConnection>,
    work: (connection: LockConnection) => Promise<Held | undefined>,
    done: (connection: LockConnection) => void,
  ): Promise<MySqlGrant | null> {
    for (let attempt = 0; ; attempt++) {
      const connection = await take();
      try {
        const held = await work(connection);
        return held ? this.#grant(connection, held) : null;
      } catch (error) {
        if (attempt > 0 || !connection.lost) throw error;
      } finally {
        done(connection);
      }
    }
  }

  #grant(connection: LockConnection, held: Held): MySqlGrant {
    connection.hold(held.key);
    return { fencingToken: held.token, connection, key: held.key, wake: held.wake };
  }
}
