import { InvalidArgumentError } from '@lockkit/core';
import {
  booleanOption,
  checkOptionKeys,
  type LockProviderOptions,
  numberOption,
  stringOption,
} from '@lockkit/core/backend';
import type { RedisOptions } from 'ioredis';
import { isRedisClient, type RedisClient } from './redis-node.js';

/**
 * One Redis node: a URL (`redis://…`, `rediss://…`), ioredis connection options, or an
 * ioredis `Redis`/`Cluster` client you own (the provider never closes it).
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
}

/** Options after validation and defaults. */
export interface ResolvedRedisOptions {
  readonly nodes: readonly RedisNodeSpec[];
  readonly namespace: string;
  readonly leaseMs: number;
  readonly autoExtend: boolean;
  readonly commandTimeoutMs: number;
  readonly pollIntervalMs: number;
}

const knownKeys = [
  'namespace',
  'nodes',
  'leaseMs',
  'autoExtend',
  'commandTimeoutMs',
  'pollIntervalMs',
] as const;

/** Validates options (throws InvalidArgumentError) and fills in defaults. */
export function resolveRedisOptions(options: RedisLockProviderOptions): ResolvedRedisOptions {
  checkOptionKeys(options, knownKeys, 'Redis lock provider');
  const namespace = stringOption('namespace', options.namespace, '');
  const nodes = resolveNodes(options.nodes);
  const leaseMs = numberOption('leaseMs', options.leaseMs, { default: 30_000, min: 100 });
  const autoExtend = booleanOption('autoExtend', options.autoExtend, true);
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
  return Object.freeze({ nodes, namespace, leaseMs, autoExtend, commandTimeoutMs, pollIntervalMs });
}

function resolveNodes(value: RedisLockProviderOptions['nodes']): readonly RedisNodeSpec[] {
  const list: readonly unknown[] =
    value === undefined ? ['redis://127.0.0.1:6379'] : Array.isArray(value) ? value : [value];
  if (list.length === 0) throw new InvalidArgumentError('nodes must list at least one node');
  const seen = new Set<unknown>();
  for (const [index, node] of list.entries()) {
    if (typeof node === 'string') {
      let url: URL;
      try {
        url = new URL(node);
      } catch {
        throw new InvalidArgumentError(`nodes[${index}] is not a valid URL`);
      }
      if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
        throw new InvalidArgumentError(`nodes[${index}] must be a redis:// or rediss:// URL`);
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
