import type { LockRequest, WaitContext } from '@lockkit/core/backend';
import type { FencingCounter } from './fencing-counter.js';
import type { LockConnection } from './lock-connection.js';
import type { LockConnections } from './lock-connections.js';
import type { LockKeys } from './lock-keys.js';
import { isInterrupted } from './mysql-errors.js';

/** What the algorithms share. */
export interface AlgorithmContext {
  readonly connections: LockConnections;
  readonly fencing: FencingCounter;
  readonly maxReaders: number;
  readonly safetyPollMs: number;
}

/** A lock taken on a session: the `GET_LOCK` name it holds there, and its token. */
export interface Held {
  readonly key: string;
  readonly token: bigint;
  /** A queue lock whose holder (a head waiter) is woken with `KILL QUERY` on release. */
  readonly wake?: string | undefined;
  /** More names held by the same grant (a weighted semaphore grant's other permits). */
  readonly more?: readonly string[] | undefined;
}

/** One primitive on `GET_LOCK`: a non-blocking attempt and a server-side wait. */
export interface LockAlgorithm {
  /**
   * The wait is one statement that also grants a free lock at once, so while a lock is
   * contended an acquire may skip the attempt and go straight to {@link wait}.
   */
  readonly waitsInOneStatement: boolean;
  /**
   * The wait calls `wait.waiting()` itself, once the statement that takes its place in line
   * is on its way (so an attempt made after the `lockkit:wait` event sees that place);
   * otherwise the backend announces the wait before taking a session for it.
   */
  readonly announcesWaiting?: boolean;
  /** Keys an attempt's session must not hold (GET_LOCK on them would stack). */
  conflicts(keys: LockKeys): readonly string[];
  /** One non-blocking attempt on a shared session. */
  attempt(
    context: AlgorithmContext,
    connection: LockConnection,
    request: LockRequest,
    keys: LockKeys,
  ): Promise<Held | undefined>;
  /**
   * Waits on the server, on a session that holds nothing, until granted, the deadline, or
   * abort (undefined; the session is left holding nothing).
   */
  wait(
    context: AlgorithmContext,
    connection: LockConnection,
    request: LockRequest,
    keys: LockKeys,
    wait: WaitContext,
  ): Promise<Held | undefined>;
}

/**
 * Frees everything a waiting session took (it held nothing when the wait began). Retried
 * when a late `KILL QUERY` interrupts it; a session that cannot be cleaned is destroyed.
 */
export async function releaseEverything(connection: LockConnection): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await connection.query('DO RELEASE_ALL_LOCKS()');
      return;
    } catch (error) {
      if (!isInterrupted(error) || attempt >= 3) {
        connection.markLost('could not clean up after a wait', error);
        return;
      }
    }
  }
}
