import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { LockRequest } from '@lockkit/core/backend';
import { RedisLockBackend, redisLockKeys, resolveRedisOptions } from '@lockkit/redis';
import { Redis } from 'ioredis';
import type { BackendId } from '../backends/backend-ids.js';
import type { Contender, LockClient } from './contender.js';

/**
 * The cost ladder of a Redis lock cycle: hand-written clients that each add one of lockkit's
 * guarantees to the one before, so the difference between two rungs is what that guarantee
 * costs. Every rung sends one command per node to acquire and one to release, to all nodes at
 * once, and goes on when a majority has answered (as lockkit and redlock do, in the steady
 * state); only the server-side work grows.
 * These scripts mirror what lockkit's own scripts do per step (packages/redis/src/scripts);
 * they are a measuring stick, not lockkit's code path. The last rungs send them with lockkit's
 * own key names (what a longer command costs the client and the server), then, on Redlock,
 * with its release's fence floor; then lockkit's backend alone ({@link backendContender}) and
 * lockkit through its provider (measured beside them) split the rest into the backend's code
 * and core's.
 */

const leaseMs = '30000';

const releaseToken = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end";

/** One rung: its label, and the Lua of its acquire and release (undefined: a plain SET NX PX). */
interface Rung {
  readonly label: string;
  readonly acquire: string | undefined;
  readonly release: string;
  /** Keys after the lock's: fence, cancel marker, holds hash, waiters set. */
  readonly extraKeys: number;
  /** lockkit's key names (hashed, hash-tagged, a cancel key per attempt) instead of short ones. */
  readonly lockkitKeys?: boolean;
  /**
   * The release also gets the grant's fencing token as a floor to raise the counter to
   * (ARGV[2]) and leaves a cancel marker if the hold is not there (ARGV[3] ms): what lockkit's
   * Redlock release does to keep the nodes' counters together. Only on more than one node.
   */
  readonly fenceFloor?: boolean;
}

const set = "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end";
const fence = "local fence = redis.call('INCR', KEYS[2])";
const cancelled = "if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end";
const record =
  "redis.call('DEL', KEYS[4]) redis.call('HSET', KEYS[4], ARGV[1], fence .. ':' .. ARGV[3]) redis.call('PEXPIRE', KEYS[4], ARGV[2])";
const wake = "if redis.call('EXISTS', KEYS[5]) == 1 then redis.call('PUBLISH', KEYS[5], '*') end";
const raiseFence =
  "local current = redis.call('GET', KEYS[2]) or '0' if #current < #ARGV[2] or (#current == #ARGV[2] and current < ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2]) end";
/** Every guarantee of the acquire, and the release that drops its record (the last rungs). */
const recordedAcquire = `${cancelled} ${set} ${fence} ${record} return fence`;
const dropRecord = "redis.call('HDEL', KEYS[4], ARGV[1])";
const releaseOrTombstone =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) elseif tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[3], '1', 'PX', ARGV[3]) end";

const rungs: readonly Rung[] = [
  { label: 'SET NX PX + Lua release', acquire: undefined, release: releaseToken, extraKeys: 0 },
  {
    label: '+ acquire as a Lua script',
    acquire: `${set} return 1`,
    release: releaseToken,
    extraKeys: 0,
  },
  {
    label: '+ fencing token (INCR)',
    acquire: `${set} ${fence} return fence`,
    release: releaseToken,
    extraKeys: 1,
  },
  {
    label: '+ phantom-acquire guard, waiter wake-up',
    acquire: `${cancelled} ${set} ${fence} return fence`,
    release: `${releaseToken} ${wake}`,
    extraKeys: 4,
  },
  {
    label: '+ inspection record',
    acquire: recordedAcquire,
    release: `${dropRecord} ${releaseToken} ${wake}`,
    extraKeys: 4,
  },
  {
    label: "+ lockkit's key names",
    acquire: recordedAcquire,
    release: `${dropRecord} ${releaseToken} ${wake}`,
    extraKeys: 4,
    lockkitKeys: true,
  },
  {
    label: "+ Redlock's release: fence floor",
    acquire: recordedAcquire,
    release: `${raiseFence} ${dropRecord} ${releaseOrTombstone} ${wake}`,
    extraKeys: 4,
    lockkitKeys: true,
    fenceFloor: true,
  },
];

/** A mutex's keys on the rung: short ones, or lockkit's (`redisLockKeys`, namespace ''). */
function rungKeys(name: string, rung: Rung): (token: string) => string[] {
  if (rung.lockkitKeys) {
    const keys = redisLockKeys('', 'mutex', name);
    return (token) => [keys.lock, keys.fence, keys.cancel(token), keys.holds, keys.waiters];
  }
  const all = [name, `${name}:fence`, `${name}:cancel`, `${name}:holds`, `${name}:waiters`];
  const keys = all.slice(0, 1 + rung.extraKeys);
  return () => keys;
}

/** The first `quorum` replies of commands sent to every node at once (rejects on any error). */
function majority<T>(attempts: readonly Promise<T>[]): Promise<T[]> {
  const quorum = Math.floor(attempts.length / 2) + 1;
  return new Promise((resolve, reject) => {
    const replies: T[] = [];
    for (const attempt of attempts) {
      attempt.then((reply) => {
        replies.push(reply);
        if (replies.length === quorum) resolve(replies);
      }, reject);
    }
  });
}

/** A rung's client on every node: one connection per node, scripts loaded once. */
function rungContender(backend: BackendId, urls: readonly string[], rung: Rung): Contender {
  return {
    backend,
    library: rung.label,
    lockkit: false,
    waits: 'a measuring stick: tries once',
    holdsMany: 'a measuring stick',
    async open(): Promise<LockClient> {
      const nodes = urls.map((url) => new Redis(url, { lazyConnect: true }));
      await Promise.all(nodes.map((node) => node.connect()));
      const load = (lua: string): Promise<string[]> =>
        Promise.all(nodes.map(async (node) => String(await node.script('LOAD', lua))));
      const acquireShas = rung.acquire === undefined ? undefined : await load(rung.acquire);
      const releaseShas = await load(rung.release);
      // Derived once per name, as lockkit memoises its keys: the rungs measure the servers.
      const keys = new Map<string, (token: string) => string[]>();
      const keysOf = (name: string): ((token: string) => string[]) => {
        let known = keys.get(name);
        if (known === undefined) {
          known = rungKeys(name, rung);
          keys.set(name, known);
        }
        return known;
      };
      // As long as lockkit's record: '<since ms>:<owner>', the owner being '<host>:<pid>'.
      const owner = `${Date.now()}:${hostname()}:${process.pid}`;
      return {
        async acquire(name) {
          const token = randomUUID();
          const keys = keysOf(name)(token);
          const replies = await majority(
            nodes.map((node, index) =>
              acquireShas === undefined
                ? node.set(name, token, 'PX', leaseMs, 'NX')
                : node.evalsha(
                    acquireShas[index] ?? '',
                    keys.length,
                    ...keys,
                    token,
                    leaseMs,
                    owner,
                  ),
            ),
          );
          if (replies.some((reply) => reply === null || Number(reply) < 1)) {
            throw new Error(`${name} is held`);
          }
          // The floor: the largest token the quorum returned (they agree in the steady state).
          const floor = rung.fenceFloor ? [String(Math.max(...replies.map(Number))), '0'] : [];
          return () =>
            majority(
              nodes.map((node, index) =>
                node.evalsha(releaseShas[index] ?? '', keys.length, ...keys, token, ...floor),
              ),
            );
        },
        async close() {
          for (const node of nodes) node.disconnect();
        },
      };
    },
  };
}

/**
 * lockkit's Redis backend called directly (`tryAcquire`, `release`: its scripts, keys, votes
 * and Redlock's fence agreement), without the provider around it: the difference to lockkit's
 * row is core's layer (the acquire policy, the handle, its lost signal and lease timer).
 */
function backendContender(backend: BackendId, urls: readonly string[]): Contender {
  return {
    backend,
    library: "lockkit's backend alone (no provider)",
    lockkit: false,
    waits: 'a measuring stick: tries once',
    holdsMany: 'a measuring stick',
    async open(): Promise<LockClient> {
      const redis = new RedisLockBackend(resolveRedisOptions({ nodes: [...urls] }));
      const owner = `${hostname()}:${process.pid}`;
      // A single try: core's context for timeout 0 (nothing waits, so nothing aborts it).
      const once = {
        signal: new AbortController().signal,
        deadline: Number.NEGATIVE_INFINITY,
        waiting: () => {},
      };
      return {
        async acquire(name) {
          const request: LockRequest = { name, namespace: '', kind: 'mutex', maxCount: 1, owner };
          const grant = await redis.tryAcquire(request, once);
          if (!grant) throw new Error(`${name} is held`);
          return () => redis.release(request, grant);
        },
        close: () => redis.close(),
      };
    },
  };
}

/**
 * The ladder's rungs on `urls` (one node, or the Redlock nodes), cheapest first, then
 * lockkit's backend alone.
 */
export function redisLadder(backend: BackendId, urls: readonly string[]): Contender[] {
  return [
    ...rungs
      .filter((rung) => urls.length > 1 || !rung.fenceFloor)
      .map((rung) => rungContender(backend, urls, rung)),
    backendContender(backend, urls),
  ];
}
