import { type Capabilities, InvalidArgumentError } from '@lockkit/core';
import {
  booleanOption,
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  PROVIDER_OPTION_KEYS,
  stringOption,
} from '@lockkit/core/backend';
import type { ZooKeeperAcl, ZooKeeperClient } from './zookeeper-client.js';

/** Credentials for `addAuthInfo`, e.g. `{ scheme: 'digest', auth: 'user:password' }`. */
export interface ZooKeeperAuth {
  readonly scheme: string;
  readonly auth: string | Uint8Array;
}

/** Options of {@link createZooKeeperLockProvider}. Give `connectionString` or `client`. */
export interface ZooKeeperLockProviderOptions extends LockProviderOptions {
  /**
   * Servers to connect to: `host:port[,host:port…][/chroot]`, optionally written as a URL
   * `zookeeper://host:port[,host:port…][/chroot]`. The provider owns the client it creates,
   * closes it on `close()` and replaces it after a session expiry.
   * @defaultValue undefined (then `client` is required)
   */
  readonly connectionString?: string | undefined;
  /**
   * A `node-zookeeper-client` client you created (connected or not; lockkit calls `connect()`
   * only on clients it creates). Never closed by lockkit. Create it with `retries: 0`: its
   * blind re-send of a create can leave duplicate lock nodes. An injected client cannot be
   * replaced after its session expired: acquires then fail with `BackendUnavailableError`.
   * @defaultValue undefined (then `connectionString` is required)
   */
  readonly client?: ZooKeeperClient | undefined;
  /**
   * Node under which every lock's parent node lives.
   * @defaultValue '/lockkit'
   */
  readonly basePath?: string | undefined;
  /**
   * Do not create `basePath` (it exists, e.g. provisioned with a restrictive ACL). Lock parent
   * nodes below it are still created on demand and removed when empty.
   * @defaultValue false
   */
  readonly assumePathExists?: boolean | undefined;
  /**
   * Session timeout to ask for, in ms (the server clamps it to [2, 20] × its tickTime). Bounds
   * how long a dead holder blocks others and how long a partitioned holder keeps believing it
   * holds the lock.
   * @defaultValue 10000
   */
  readonly sessionTimeoutMs?: number | undefined;
  /**
   * Deadline of each request to ZooKeeper, in ms; a request without a reply by then fails
   * with `BackendUnavailableError`.
   * @defaultValue `sessionTimeoutMs`
   */
  readonly operationTimeoutMs?: number | undefined;
  /**
   * How long a request waits for a connection to ZooKeeper, in ms, before it fails with
   * `BackendUnavailableError` (a server that accepts connections but does not answer, an
   * address that drops packets). A refused connection or an unknown host fails at once, once
   * every server of the connect string was tried. At most `operationTimeoutMs`, which also
   * bounds the wait for a connection.
   * @defaultValue 5000, or `operationTimeoutMs` if that is shorter
   */
  readonly connectTimeoutMs?: number | undefined;
  /**
   * Upper bound of the random pause between reconnect rounds, in ms (client option `spinDelay`).
   * @defaultValue 200
   */
  readonly spinDelayMs?: number | undefined;
  /**
   * How long, in ms, a lock's parent node that releases left empty is kept before it is
   * removed (so a lock taken in a loop does not delete and re-create its parent each time).
   * `0` removes it together with the last release. `close()` removes pending ones at once.
   * @defaultValue 1000
   */
  readonly parentCleanupDelayMs?: number | undefined;
  /**
   * ACL of the nodes lockkit creates (base path, lock parents, lock nodes), as
   * `node-zookeeper-client` ACL objects.
   * @defaultValue `ACL.OPEN_ACL_UNSAFE` (world: all)
   */
  readonly acl?: readonly ZooKeeperAcl[] | undefined;
  /**
   * Credentials added to clients lockkit creates (`addAuthInfo`). With an injected `client`,
   * add them to your client instead.
   * @defaultValue []
   */
  readonly auth?: readonly ZooKeeperAuth[] | undefined;
}

/** Options after validation and defaults. */
export interface ResolvedZooKeeperOptions {
  readonly namespace: string;
  /** Core's LockProvider validates it. */
  readonly owner: string | undefined;
  readonly connectionString: string | undefined;
  readonly client: ZooKeeperClient | undefined;
  readonly basePath: string;
  readonly assumePathExists: boolean;
  readonly sessionTimeoutMs: number;
  readonly operationTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly spinDelayMs: number;
  readonly parentCleanupDelayMs: number;
  readonly acl: readonly ZooKeeperAcl[] | undefined;
  readonly auth: readonly { readonly scheme: string; readonly auth: Buffer }[];
}

const known = [
  ...PROVIDER_OPTION_KEYS,
  'connectionString',
  'client',
  'basePath',
  'assumePathExists',
  'sessionTimeoutMs',
  'operationTimeoutMs',
  'connectTimeoutMs',
  'spinDelayMs',
  'parentCleanupDelayMs',
  'acl',
  'auth',
];

/** Validates `options` (before any I/O) and fills in defaults. */
export function resolveOptions(options: ZooKeeperLockProviderOptions): ResolvedZooKeeperOptions {
  checkOptionKeys(options, known, 'ZooKeeper lock provider');
  const { connectionString, client } = options;
  if ((connectionString === undefined) === (client === undefined)) {
    throw new InvalidArgumentError('give exactly one of connectionString and client');
  }
  if (
    client !== undefined &&
    (typeof client !== 'object' || client === null || typeof client.create !== 'function')
  ) {
    throw new InvalidArgumentError('client must be a node-zookeeper-client Client');
  }
  const namespace = stringOption('namespace', options.namespace, '');
  const sessionTimeoutMs = numberOption('sessionTimeoutMs', options.sessionTimeoutMs, {
    default: 10_000,
    min: 100,
  });
  if (options.auth !== undefined && !Array.isArray(options.auth)) {
    throw new InvalidArgumentError('auth must be an array of { scheme, auth } entries');
  }
  const auth = (options.auth ?? []).map((entry) => credentials(entry));
  if (client !== undefined && auth.length > 0) {
    throw new InvalidArgumentError(
      'auth applies to clients lockkit creates; add it to your client',
    );
  }
  const assumePathExists = booleanOption('assumePathExists', options.assumePathExists, false);
  const operationTimeoutMs = numberOption('operationTimeoutMs', options.operationTimeoutMs, {
    default: sessionTimeoutMs,
    min: 1,
  });
  const connectTimeoutMs = numberOption('connectTimeoutMs', options.connectTimeoutMs, {
    default: Math.min(5000, operationTimeoutMs),
    min: 1,
  });
  if (connectTimeoutMs > operationTimeoutMs) {
    throw new InvalidArgumentError(
      `connectTimeoutMs (${connectTimeoutMs}) must not exceed operationTimeoutMs (${operationTimeoutMs}), which also bounds the wait for a connection`,
    );
  }
  const acl = options.acl;
  if (acl !== undefined && (!Array.isArray(acl) || acl.length === 0)) {
    throw new InvalidArgumentError('acl must be a non-empty array of ACL entries');
  }
  return Object.freeze({
    namespace,
    owner: options.owner,
    connectionString: connectionString === undefined ? undefined : servers(connectionString),
    client,
    basePath: basePath(stringOption('basePath', options.basePath, '/lockkit')),
    assumePathExists,
    sessionTimeoutMs,
    operationTimeoutMs,
    connectTimeoutMs,
    spinDelayMs: numberOption('spinDelayMs', options.spinDelayMs, { default: 200, min: 0 }),
    parentCleanupDelayMs: numberOption('parentCleanupDelayMs', options.parentCleanupDelayMs, {
      default: 1000,
      min: 0,
    }),
    acl: acl === undefined ? undefined : Object.freeze([...acl]),
    auth: Object.freeze(auth),
  });
}

function servers(value: unknown): string {
  if (typeof value !== 'string')
    throw new InvalidArgumentError('connectionString must be a string');
  const stripped = value.replace(/^(zookeeper|zk):\/\//i, '');
  const [hosts = '', ...chroot] = stripped.split('/');
  const valid = hosts.split(',').every((host) => /^[^\s:,]+:\d{1,5}$/.test(host));
  if (!valid || (chroot.length > 0 && chroot.some((part) => part === ''))) {
    throw new InvalidArgumentError(
      `connectionString must look like "host:port[,host:port][/chroot]", got ${JSON.stringify(value)}`,
    );
  }
  return stripped;
}

function basePath(value: string): string {
  if (value === '/') return value;
  const parts = value.split('/');
  const valid =
    parts[0] === '' &&
    parts.length > 1 &&
    parts
      .slice(1)
      .every((part) => part !== '' && part !== '.' && part !== '..' && !part.includes('\0'));
  if (!valid) {
    throw new InvalidArgumentError(
      `basePath must be an absolute ZooKeeper path without a trailing "/", got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function credentials(entry: ZooKeeperAuth): { scheme: string; auth: Buffer } {
  if (
    typeof entry !== 'object' ||
    entry === null ||
    typeof entry.scheme !== 'string' ||
    !entry.scheme
  ) {
    throw new InvalidArgumentError('each auth entry needs a non-empty scheme');
  }
  if (typeof entry.auth === 'string')
    return { scheme: entry.scheme, auth: Buffer.from(entry.auth) };
  if (entry.auth instanceof Uint8Array)
    return { scheme: entry.scheme, auth: Buffer.from(entry.auth) };
  throw new InvalidArgumentError('auth must be a string or bytes');
}

/** What a ZooKeeper provider with these options promises (see docs/contract.md). */
export function zookeeperCapabilities(options: ResolvedZooKeeperOptions): Capabilities {
  return {
    crossProcess: true,
    handOver: false, // ephemeral nodes belong to the session
    leases: false,
    minLeaseMs: Number.POSITIVE_INFINITY, // a hold lasts as long as the session
    weightedPermits: true, // a lease node's name carries its permit count; the queue is FIFO
    fifo: true,
    inspection: true, // each node records owner and since; forceRelease deletes holder nodes
    // Node deleted: one round trip. Session gone: the heartbeat's deadline, i.e. at most
    // the session timeout after the last reply, plus timer and scheduling slack.
    lostDetectionMs: options.sessionTimeoutMs + 1000,
    // The server expires a dead holder's session within the session timeout plus one
    // tickTime (≤ 2 s by default); the next waiter's watch then fires.
    abandonedReleaseMs: options.sessionTimeoutMs + 3000,
    // A refused connection or an unknown host fails at once; a server that does not
    // complete the handshake, at the connect timeout; every request, the wait for a
    // connection included, at the operation timeout (≥ the connect timeout).
    unavailableMs: options.operationTimeoutMs + 250,
  };
}
