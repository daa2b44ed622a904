import { BackendUnavailableError, LockDeadlockError } from '@lockkit/core';

/** MariaDB reports a user-lock deadlock as ER_LOCK_DEADLOCK. */
export const ER_LOCK_DEADLOCK = 1213;
/** MySQL 5.7+ reports a user-lock deadlock as ER_USER_LOCK_DEADLOCK. */
export const ER_USER_LOCK_DEADLOCK = 3058;
/** The statement was interrupted by `KILL QUERY`. */
export const ER_QUERY_INTERRUPTED = 1317;
/**
 * A prepared statement of ours is unknown to the session: the connection now reaches another
 * session (a pooling proxy moved it), whose locks are not ours.
 */
export const ER_UNKNOWN_STMT_HANDLER = 1243;
/** `KILL` of a session that has already ended (unknown thread id). */
export const ER_NO_SUCH_THREAD = 1094;
/** The fencing table does not exist yet. */
export const ER_NO_SUCH_TABLE = 1146;
/** The fencing sequence does not exist yet (MariaDB). */
export const ER_UNKNOWN_SEQUENCES = 4091;

/** The shape of a `mysql2` error we look at. */
export interface MySqlError extends Error {
  readonly errno?: number;
  readonly code?: string;
  readonly fatal?: boolean;
}

/**
 * Connection failures that stay until someone changes the setup (a `retryable: false`
 * BackendUnavailableError): ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_BAD_DB_ERROR.
 */
export const setupErrnos: ReadonlySet<number> = new Set([1044, 1045, 1049]);

/** The server's error number of `error`, if it has one. */
export function errnoOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'errno' in error
    ? Number((error as MySqlError).errno)
    : undefined;
}

/** True for both servers' deadlock errors. */
export function isDeadlock(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === ER_LOCK_DEADLOCK || errno === ER_USER_LOCK_DEADLOCK;
}

/** True if `KILL QUERY` interrupted the statement. */
export function isInterrupted(error: unknown): boolean {
  return errnoOf(error) === ER_QUERY_INTERRUPTED;
}

/**
 * The typed error for a failed lock statement: deadlocks (MariaDB 1213, MySQL 3058) become
 * {@link LockDeadlockError}; anything else (transport, server error) a
 * {@link BackendUnavailableError}. `cause` keeps the `mysql2` error.
 */
export function lockError(lockName: string, error: unknown): Error {
  if (isDeadlock(error)) return new LockDeadlockError(lockName, error);
  if (BackendUnavailableError.isInstance(error) || LockDeadlockError.isInstance(error)) {
    return error;
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new BackendUnavailableError(`MySQL lock operation failed: ${detail}`, {
    lockName,
    cause: error,
  });
}

/**
 * `error` naming the server it could not reach: a {@link BackendUnavailableError} whose
 * message lacks `address` is rebuilt with it (same lock name and cause); others pass.
 */
export function withAddress(error: unknown, address: string): unknown {
  if (!BackendUnavailableError.isInstance(error) || error.message.includes(address)) return error;
  return new BackendUnavailableError(`${error.message} (MySQL at ${address})`, {
    lockName: error.lockName,
    cause: error.cause ?? error,
    retryable: error.retryable,
  });
}
