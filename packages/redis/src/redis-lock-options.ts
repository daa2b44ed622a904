import { InvalidArgumentError } from '@lockkit/core';
import {
  booleanOption,
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  stringOption,
} from '@lockkit/core/backend';
import type { RedisOptions } from 'ioredis';
import type { RedisClient } from './redis-clients.js';
import { isRedisClient } from './redis-node.js';
import { isTopologyUrl, parseTopologyUrl } from './topology-url.js';

/**
 * One Redis node: a URL — `redis://…`, `rediss://…`, a Cluster
 * `redis+cluster://h1:p1,h2:p2` or a Sentinel-managed primary
 * `redis+sentinel://s1:p1,s2:p2/<masterName>[/<db>]` — ioredis connection options (also with
 * `sentinels` and `name`), or an ioredis `Redis`/`Cluster` client you own (the provider never
 * closes it).
 */
export type RedisNodeSpec = string | RedisOptions | RedisClient;

/** Options of {@link createRedisLockProvider}. Validated at construction, before any I/O. */
export interface RedisLockProviderOptions extends LockProviderOptions {
  /**
   * The node, or the N independent nodes of a Redlock (N > 1: a lock is held when a majority
   * of them granted it). Redlock nodes must be independent masters, not replicas or shards of
   * one cluster. Clients the provider creates from URLs or options get `lazyConnect`,
   * `enableOfflineQueue: false`, `autoResendUnfulfilledCommands: false` and
   * `maxRetriesPerRequest: 0` (nothing of ours is ever queued or replayed by ioredis).
   * @defaultValue 'redis://127.0.0.1:6379'
   */
  readonly nodes?: RedisNodeSpec | readonly RedisNodeSpec[] | undefined;
  /**
   * Lease length in ms: a holder that stops extending (crashed, paused, partitioned) loses
   * the lock after at most this long. Integer in [100, 2^31-1].
   * @defaultValue 30000
   */
  readonly leaseMs?: number | undefined;
  /**
   * Extend leases automatically every `leaseMs / 3` while a handle is held. With `false` a
   * hold lasts at most `leaseMs` (then `handle.signal` aborts with `LockLostError`).
   * @defaultValue true
   */
  readonly autoExtend?: boolean | undefined;
  /**
   * Deadline in ms for one command on one node (the Redlock per-node timeout). A command
   * that is not answered in time counts as failed; an acquire that timed out is undone with
   * a token-checked release. At most `leaseMs / 3`.
   * @defaultValue `min(1000, max(100, leaseMs / 10))` (at most `leaseMs / 3`)
   */
  readonly commandTimeoutMs?: number | undefined;
  /**
   * Safety poll in ms while waiting (core adds ±20 % jitter). Waiters are woken by pub/sub
   * and by the blocking lease's expiry; the poll only covers lost messages.
   * @defaultValue `min(1000, leaseMs / 3)`
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * Replica acknowledgement (opt-in): after every grant (which also increments the fencing
   * counter) and every lease extension, `WAIT minReplicas replicaTimeoutMs` on the same
   * connection. A grant that fewer replicas confirmed in time is released and the attempt
   * fails with `BackendUnavailableError` (core's outage policy retries it until the call's
   * deadline); an unconfirmed extension counts as a failed one. `0` = no WAIT. What this does
   * and does not guarantee: see "Choosing a Redis topology" in docs/backends/redis.md.
   * Integer in [0, 100].
   * @defaultValue 0
   */
  readonly minReplicas?: number | undefined;
  /**
   * Write each hold's inspection record (owner, since, fencing token) into the lock's holds
   * hash, in the acquire script (no extra round trip; about 2 µs of server time per grant and
   * release). `false`: `inspect()` still lists the holds and their tokens, without owner, since
   * and fencing token; `forceRelease()` works the same.
   * @defaultValue true
   */
  readonly recordHolds?: boolean | undefined;
  /**
   * How long a WAIT may block, in ms (only with `minReplicas` > 0). It adds to the deadline of
   * acquire and extend commands, and to `unavailableMs`. Integer in [1, leaseMs / 3].
   * @defaultValue `commandTimeoutMs` (rounded up)
   */
  readonly replicaTimeoutMs?: number | undefined;
}

/** Options after validation and defaults. */
export interface ResolvedRedisOptions {
  readonly nodes: readonly RedisNodeSpec[];
  readonly namespace: string;
  readonly leaseMs: number;
  readonly autoExtend: boolean;
  readonly commandTimeoutMs: number;
  readonly recordHolds: boolean;
  readonly pollIntervalMs: number;
  /** 0 = no replica acknowledgement. */
  readonly minReplicas: number;
  readonly replicaTimeoutMs: number;
}

const knownKeys = [
  'namespace',
  'nodes',
  'leaseMs',
  'autoExtend',
  'commandTimeoutMs',
  'pollIntervalMs',
  'minReplicas',
  'replicaTimeoutMs',
  'owner',
  'recordHolds',
] as const;

/** Validates options (throws InvalidArgumentError) and fills in defaults. */
export function resolveRedisOptions(options: RedisLockProviderOptions): ResolvedRedisOptions {
  checkOptionKeys(options, knownKeys, 'Redis lock provider');
  const namespace = stringOption('namespace', options.namespace, '');
  const nodes = resolveNodes(options.nodes);
  const leaseMs = numberOption('leaseMs', options.leaseMs, { default: 30_000, min: 100 });
  const autoExtend = booleanOption('autoExtend', options.autoExtend, true);
  const recordHolds = booleanOption('recordHolds', options.recordHolds, true);
  const commandTimeoutMs = numberOption('commandTimeoutMs', options.commandTimeoutMs, {
    default: Math.min(leaseMs / 3, 1000, Math.max(100, leaseMs / 10)),
    min: 1,
    max: leaseMs / 3,
    integer: false,
  });
  const pollIntervalMs = numberOption('pollIntervalMs', options.pollIntervalMs, {
    default: Math.min(1000, leaseMs / 3),
    min: 1,
    integer: false,
  });
  const minReplicas = numberOption('minReplicas', options.minReplicas, {
    default: 0,
    min: 0,
    max: 100,
  });
  const replicaTimeoutMs = numberOption('replicaTimeoutMs', options.replicaTimeoutMs, {
    default: Math.min(Math.ceil(commandTimeoutMs), Math.floor(leaseMs / 3)),
    min: 1,
    max: Math.floor(leaseMs / 3),
  });
  return Object.freeze({
    nodes,
    namespace,
    leaseMs,
    autoExtend,
    commandTimeoutMs,
    pollIntervalMs,
    minReplicas,
    replicaTimeoutMs,
    recordHolds,
  });
}

function resolveNodes(value: RedisLockProviderOptions['nodes']): readonly RedisNodeSpec[] {
  const list: readonly unknown[] =
    value === undefined ? ['redis://127.0.0.1:6379'] : Array.isArray(value) ? value : [value];
  if (list.length === 0) throw new InvalidArgumentError('nodes must list at least one node');
  const seen = new Set<unknown>();
  for (const [index, node] of list.entries()) {
    if (typeof node === 'string' && isTopologyUrl(node)) {
      parseTopologyUrl(node, `nodes[${index}]`);
    } else if (typeof node === 'string') {
      let url: URL;
      try {
        url = new URL(node);
      } catch {
        throw new InvalidArgumentError(`nodes[${index}] is not a valid URL`);
      }
      if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
        throw new InvalidArgumentError(
          `nodes[${index}] must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL`,
        );
      }
    } else if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      throw new InvalidArgumentError(
        `nodes[${index}] must be a URL, ioredis options or an ioredis client`,
      );
    }
    const identity = typeof node === 'string' || isRedisClient(node) ? node : JSON.stringify(node);
    if (seen.has(identity)) {
      throw new InvalidArgumentError(
        `nodes[${index}] repeats an earlier node (Redlock needs distinct nodes)`,
      );
    }
    seen.add(identity);
  }
  return Object.freeze([...(list as RedisNodeSpec[])]);
}
