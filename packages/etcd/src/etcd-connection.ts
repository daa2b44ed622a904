/**
 * The `etcd3` client lockkit talks through, and how its failures become lockkit's errors.
 * Every request carries an absolute deadline (retries on other hosts share it); the client's
 * own retry and circuit-breaker policies are replaced by ones that only move a failed request
 * to another host.
 *
 * @module
 */
import { BackendUnavailableError } from '@lockkit/core';
import {
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleWhen,
  type IBackoff,
  type IPolicy,
  isTaskCancelledError,
  noop,
  retry,
  TimeoutStrategy,
  timeout,
  wrap,
} from 'cockatiel';
import {
  Etcd3,
  EtcdAuthenticationFailedError,
  EtcdPermissionDeniedError,
  GRPCUnauthenticatedError,
  GRPCUnavailableError,
  type IOptions,
  isRecoverableError,
} from 'etcd3';
import type { EtcdTls, ResolvedEtcdOptions } from './etcd-options.js';

/** The client a provider uses, and whether it is the provider's to close. */
export interface EtcdConnection {
  readonly client: Etcd3;
  readonly owned: boolean;
  /** The endpoints, as named in error messages. */
  readonly address: string;
}

/** Creates the client for `options` (or wraps the injected one). Connects lazily. */
export function connect(options: ResolvedEtcdOptions): EtcdConnection {
  if (options.client) {
    return { client: options.client, owned: false, address: 'the injected etcd3 client' };
  }
  const hosts = [...(options.hosts ?? [])];
  const timeoutMs = options.commandTimeoutMs;
  const client = new Etcd3({
    hosts,
    // lockkit gives each request its deadline; this one covers the client's own requests
    // (authentication) and streams get none (a watch lives as long as it is needed).
    defaultCallOptions: (context) =>
      context.isStream ? {} : { deadline: new Date(Date.now() + timeoutMs) },
    ...(options.auth && {
      auth: {
        ...options.auth,
        callOptions: () => ({ deadline: new Date(Date.now() + timeoutMs) }),
      },
    }),
    ...(options.tls && { credentials: credentialsOf(options.tls) }),
    // Notice a member that stopped answering under an open stream (etcd accepts pings every
    // 5 s by default).
    grpcOptions: { 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 5000 },
    faultHandling: {
      global: failover(hosts.length, options.commandTimeoutMs),
      host: () => (hosts.length > 1 ? skipWhileUnreachable() : noop),
      // A broken watch stream is re-opened (on another host) after 10 ms, then up to 1 s.
      // etcd3 calls `next()` on what it gets here, as on its own default (this factory).
      watchBackoff: new ExponentialBackoff({
        initialDelay: 10,
        maxDelay: 1000,
      }) as unknown as IBackoff<unknown>,
    },
  });
  return { client, owned: true, address: hosts.map(withoutScheme).join(',') };
}

/**
 * With several hosts, a request that fails on one (refused, or no answer within its share of
 * the deadline) is sent to the next; every request carries the whole operation's deadline
 * too. The requests lockkit retries are conditional on our own key's create revision, so a
 * first try that still lands later changes nothing. With one host there is nowhere to go.
 */
function failover(hostCount: number, commandTimeoutMs: number): IPolicy {
  if (hostCount < 2) return noop;
  const attemptMs = Math.max(1, Math.floor(commandTimeoutMs / hostCount));
  return wrap(
    retry(
      handleWhen((error) => isRecoverableError(error) || isTaskCancelledError(error)),
      { maxAttempts: hostCount - 1 },
    ),
    timeout(attemptMs, TimeoutStrategy.Aggressive),
  );
}

/** A host that refused a connection (or dropped it) is skipped for the next 5 s. */
function skipWhileUnreachable(): IPolicy {
  return circuitBreaker(handleWhen(isTransportFailure), {
    halfOpenAfter: 5000,
    breaker: new ConsecutiveBreaker(1),
  });
}

/** The connection to the host failed (not a request on a working connection). */
function isTransportFailure(error: Error): boolean {
  return (
    error instanceof GRPCUnavailableError &&
    /No connection established|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|Connection dropped/.test(
      error.message,
    )
  );
}

function credentialsOf(tls: EtcdTls): NonNullable<IOptions['credentials']> {
  const { rootCertificate, privateKey, certChain } = tls;
  return {
    rootCertificate,
    ...(privateKey && { privateKey }),
    ...(certChain && { certChain }),
  };
}

function withoutScheme(host: string): string {
  return host.replace(/^https?:\/\//, '');
}

/** Call options that end a request at `deadline` (a `performance.now()` time). */
export function until(deadline: number): { deadline: Date } {
  return { deadline: new Date(Date.now() + Math.max(0, deadline - performance.now())) };
}

/** Failures that waiting does not fix: wrong credentials, missing permissions. */
function isPermanent(error: unknown): boolean {
  if (
    error instanceof EtcdAuthenticationFailedError ||
    error instanceof EtcdPermissionDeniedError ||
    error instanceof GRPCUnauthenticatedError
  ) {
    return true;
  }
  const message = error instanceof Error ? error.message : '';
  return /user name is empty|invalid auth token|permission denied|authentication failed/i.test(
    message,
  );
}

/** The client's `error` as a `BackendUnavailableError` naming the endpoints. */
export function unavailable(
  what: string,
  error: unknown,
  address: string,
): BackendUnavailableError {
  if (BackendUnavailableError.isInstance(error)) return error;
  const detail = error instanceof Error ? error.message || error.name : String(error);
  const permanent = isPermanent(error);
  const hint = permanent ? ' (check the auth option and the user’s role on the key prefix)' : '';
  return new BackendUnavailableError(`etcd ${what} on ${address} failed: ${detail}${hint}`, {
    cause: error,
    retryable: !permanent,
  });
}
