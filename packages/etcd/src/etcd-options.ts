import { type Capabilities, InvalidArgumentError } from '@lockkit/core';
import {
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  PROVIDER_OPTION_KEYS,
  stringOption,
} from '@lockkit/core/backend';
import type { Etcd3 } from 'etcd3';

/** etcd user credentials (the server must have authentication enabled). */
export interface EtcdAuth {
  readonly username: string;
  readonly password: string;
}

/** TLS material for `https://` hosts, as `etcd3` takes it (PEM buffers). */
export interface EtcdTls {
  readonly rootCertificate: Buffer;
  readonly privateKey?: Buffer | undefined;
  readonly certChain?: Buffer | undefined;
}

/** Options of {@link createEtcdLockProvider}. Give `hosts` or `client`. */
export interface EtcdLockProviderOptions extends LockProviderOptions {
  /**
   * The cluster's client endpoints: `'host:port'`, `'http://host:port'`, `'https://host:port'`,
   * a comma-separated list of them, or an array. The provider owns the client it creates and
   * closes it on `close()`.
   * @defaultValue undefined (then `client` is required)
   */
  readonly hosts?: string | readonly string[] | undefined;
  /**
   * An `etcd3` client you created. lockkit never closes it, and uses its own retry and
   * timeout settings only on clients it creates.
   * @defaultValue undefined (then `hosts` is required)
   */
  readonly client?: Etcd3 | undefined;
  /** User and password, for clusters with authentication enabled (clients lockkit creates). */
  readonly auth?: EtcdAuth | undefined;
  /** TLS root certificate and client certificate (clients lockkit creates). */
  readonly tls?: EtcdTls | undefined;
  /**
   * Every key lockkit writes starts with this; it must end with `/`.
   * @defaultValue '/lockkit/'
   */
  readonly keyPrefix?: string | undefined;
  /**
   * TTL of the provider's etcd lease, in ms, a whole number of seconds (etcd counts leases in
   * seconds). Every key of the provider is attached to this one lease, which lockkit keeps
   * alive every third of it. Bounds how long a dead holder blocks others and how long a
   * partitioned holder keeps believing it holds the lock. The server raises a TTL below its
   * minimum (1.5 × its election timeout, rounded up to a second) to that minimum.
   * @defaultValue 10000
   */
  readonly sessionTtlMs?: number | undefined;
  /**
   * Deadline of each request to etcd in ms, connecting included; a request without an answer
   * by then fails with `BackendUnavailableError`. With several hosts, the request is retried on
   * another host within the same deadline.
   * @defaultValue 5000
   */
  readonly commandTimeoutMs?: number | undefined;
  /**
   * How often a waiter looks at its queue again even without a watch event (a safety net for
   * a watch stream on a member that stopped answering), in ms; also the retry interval of an
   * acquire while etcd cannot be reached.
   * @defaultValue 1000
   */
  readonly pollIntervalMs?: number | undefined;
}

/** Options after validation and defaults. */
export interface ResolvedEtcdOptions {
  readonly namespace: string;
  /** Core's LockProvider validates it. */
  readonly owner: string | undefined;
  readonly hosts: readonly string[] | undefined;
  readonly client: Etcd3 | undefined;
  readonly auth: EtcdAuth | undefined;
  readonly tls: EtcdTls | undefined;
  readonly keyPrefix: string;
  readonly sessionTtlMs: number;
  readonly commandTimeoutMs: number;
  readonly pollIntervalMs: number;
}

const known = [
  ...PROVIDER_OPTION_KEYS,
  'hosts',
  'client',
  'auth',
  'tls',
  'keyPrefix',
  'sessionTtlMs',
  'commandTimeoutMs',
  'pollIntervalMs',
];

/** Validates `options` (before any I/O) and fills in defaults. */
export function resolveOptions(options: EtcdLockProviderOptions): ResolvedEtcdOptions {
  checkOptionKeys(options, known, 'etcd lock provider');
  const { hosts, client } = options;
  if ((hosts === undefined) === (client === undefined)) {
    throw new InvalidArgumentError('give exactly one of hosts and client');
  }
  if (
    client !== undefined &&
    (typeof client !== 'object' || client === null || typeof client.lease !== 'function')
  ) {
    throw new InvalidArgumentError('client must be an etcd3 Etcd3 client');
  }
  if (client !== undefined && (options.auth !== undefined || options.tls !== undefined)) {
    throw new InvalidArgumentError(
      'auth and tls apply to clients lockkit creates; set them on your client',
    );
  }
  const sessionTtlMs = numberOption('sessionTtlMs', options.sessionTtlMs, {
    default: 10_000,
    min: 1000,
  });
  if (sessionTtlMs % 1000 !== 0) {
    throw new InvalidArgumentError(
      `sessionTtlMs must be a whole number of seconds (etcd leases count in seconds), got ${sessionTtlMs}`,
    );
  }
  const commandTimeoutMs = numberOption('commandTimeoutMs', options.commandTimeoutMs, {
    default: 5000,
    min: 1,
  });
  const keyPrefix = stringOption('keyPrefix', options.keyPrefix, '/lockkit/');
  if (!keyPrefix.endsWith('/')) {
    throw new InvalidArgumentError(`keyPrefix must end with "/", got ${JSON.stringify(keyPrefix)}`);
  }
  return Object.freeze({
    namespace: stringOption('namespace', options.namespace, ''),
    owner: options.owner,
    hosts: hosts === undefined ? undefined : Object.freeze(hostList(hosts)),
    client,
    auth: options.auth === undefined ? undefined : credentials(options.auth),
    tls: options.tls === undefined ? undefined : tlsOption(options.tls),
    keyPrefix,
    sessionTtlMs,
    commandTimeoutMs,
    pollIntervalMs: numberOption('pollIntervalMs', options.pollIntervalMs, {
      default: 1000,
      min: 10,
    }),
  });
}

const hostPattern = /^(?:https?:\/\/)?(?:\[[0-9a-fA-F:.]+\]|[^\s:/[\],]+):\d{1,5}$/;

function hostList(value: unknown): string[] {
  const list =
    typeof value === 'string'
      ? value.split(',').map((host) => host.trim())
      : Array.isArray(value)
        ? (value as unknown[])
        : undefined;
  if (list === undefined || list.length === 0) {
    throw new InvalidArgumentError('hosts must be a non-empty string or array of host:port');
  }
  for (const host of list) {
    if (typeof host !== 'string' || !hostPattern.test(host)) {
      throw new InvalidArgumentError(
        `each host must look like "host:port" or "http(s)://host:port", got ${JSON.stringify(host)}`,
      );
    }
  }
  return list as string[];
}

function credentials(auth: EtcdAuth): EtcdAuth {
  if (
    typeof auth !== 'object' ||
    auth === null ||
    typeof auth.username !== 'string' ||
    auth.username === '' ||
    typeof auth.password !== 'string'
  ) {
    throw new InvalidArgumentError('auth must be { username, password } with a non-empty username');
  }
  return Object.freeze({ username: auth.username, password: auth.password });
}

function tlsOption(tls: EtcdTls): EtcdTls {
  if (typeof tls !== 'object' || tls === null || !Buffer.isBuffer(tls.rootCertificate)) {
    throw new InvalidArgumentError(
      'tls must be { rootCertificate, privateKey?, certChain? } of Buffers',
    );
  }
  return Object.freeze({ ...tls });
}

/** What an etcd provider with these options promises (see docs/contract.md). */
export function etcdCapabilities(options: ResolvedEtcdOptions): Capabilities {
  return {
    crossProcess: true,
    // A hold is a key created by a revision; a resumer moves it onto its own lease.
    handOver: true,
    leases: false,
    minLeaseMs: Number.POSITIVE_INFINITY, // a hold lasts as long as the session's lease is kept alive
    weightedPermits: true, // a contender key carries its permit count; the queue is FIFO
    fifo: true,
    inspection: true, // each key records owner and since; forceRelease deletes holder keys
    // Key deleted: one watch event. Lease gone: at the latest when the TTL has passed since
    // the last answered keepalive was sent (the server cannot have expired it earlier), plus
    // one keepalive retry interval and scheduling slack.
    lostDetectionMs: options.sessionTtlMs + 1000,
    // A dead holder's lease expires at most one TTL after its last keepalive; the leader
    // looks for expired leases every 500 ms, and the next waiter's watch then fires.
    abandonedReleaseMs: options.sessionTtlMs + 2000,
    // Every request, connecting and retries on other hosts included, ends at its deadline.
    unavailableMs: options.commandTimeoutMs + 250,
  };
}
