import type { LockHandle } from '@lockkit/core';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { acquireSemaphore, redrawFence } from '../src/scripts/acquire-scripts.js';

// Two semaphore permits granted at the same moment on a Redlock whose quorum is every node
// (maxCount 3 on 3 nodes), counted in opposite orders on the nodes, in the acquire round and
// in every redraw. Both start from one floor, so both aim at one value and each gets it on
// some nodes and the next value on the others: before the fix they failed together round
// after round ("did not agree after 4 redraws"), and a waiting one retried only at the poll
// interval although permits were free. Now a round that did not agree lifts the floor by a
// random amount, so the two aim at different values; the higher one agrees on every node
// whichever came first there, and the other agrees alone in the next round.
//
// The order is forced without timing: every acquire and redraw of B waits, on nodes 0 and 2,
// until A's of the same round answered there, and A's waits for B's on node 1 (a wait ends
// when the other acquire is over).
let servers: ServerHandle[] = [];
let raw: Redis[] = [];
const opened: Redis[] = [];
const providers: RedisLockProvider[] = [];

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve = (): void => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** One contender's progress: when its n-th acquire-or-redraw on a node answered. */
class Progress {
  readonly #answered = new Map<string, Deferred>();
  #over = false;

  answered(node: number, round: number): Deferred {
    const key = `${node}:${round}`;
    let entry = this.#answered.get(key);
    if (!entry) {
      entry = deferred();
      this.#answered.set(key, entry);
      if (this.#over) entry.resolve();
    }
    return entry;
  }

  /** Its acquire is over: nobody waits for it any more. */
  end(): void {
    this.#over = true;
    for (const entry of this.#answered.values()) entry.resolve();
  }
}

type EvalSha = (sha: string, numKeys: number, ...rest: (string | number)[]) => Promise<unknown>;
const gated = new Set([acquireSemaphore.sha, redrawFence.sha]);

/** A client of `node` for `self` that runs its acquires and redraws after `other`'s when `after`. */
function client(node: number, self: Progress, other: Progress, after: boolean): Redis {
  const created = new Redis(servers[node]!.url);
  opened.push(created);
  const target = created as unknown as { evalsha: EvalSha };
  const original = target.evalsha.bind(created);
  let round = 0;
  target.evalsha = async (sha, numKeys, ...rest) => {
    if (!gated.has(sha)) return original(sha, numKeys, ...rest);
    const mine = round++;
    if (after) await other.answered(node, mine).promise;
    try {
      return await original(sha, numKeys, ...rest);
    } finally {
      self.answered(node, mine).resolve();
    }
  };
  return created;
}

function provider(nodes: Redis[]): RedisLockProvider {
  const created = createRedisLockProvider({
    nodes,
    leaseMs: 20_000,
    commandTimeoutMs: 5000,
    autoExtend: false,
    pollIntervalMs: 60_000,
  });
  providers.push(created);
  return created;
}

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
  raw = servers.map((server) => new Redis(server.url));
  // Loaded up front, so every call goes through EVALSHA (a NOSCRIPT round is not gated).
  for (const node of raw) {
    await node.script('LOAD', acquireSemaphore.lua);
    await node.script('LOAD', redrawFence.lua);
  }
});

afterAll(async () => {
  await Promise.all(providers.map((created) => created.close()));
  for (const node of [...raw, ...opened]) node.disconnect();
  await Promise.all(servers.map((server) => server.stop()));
});

describe('Redlock: simultaneous shared grants', () => {
  it('two permits counted in opposite orders in every round both settle a token', async () => {
    const name = 'simultaneous-permits';
    const keys = redisLockKeys('', 'semaphore', name);
    for (const node of raw) await node.set(keys.fence, '10');
    const a = new Progress();
    const b = new Progress();
    // A goes first on nodes 0 and 2, B on node 1.
    const pa = provider([client(0, a, b, false), client(1, a, b, true), client(2, a, b, false)]);
    const pb = provider([client(0, b, a, true), client(1, b, a, false), client(2, b, a, true)]);
    const settle = (acquire: Promise<LockHandle>, progress: Progress): Promise<LockHandle> =>
      acquire.finally(() => progress.end());
    const [first, second] = await Promise.allSettled([
      settle(pa.createSemaphore(name, 3).acquire({ timeout: 0 }), a),
      settle(pb.createSemaphore(name, 3).acquire({ timeout: 0 }), b),
    ]);
    const failures = [first, second].flatMap((outcome) =>
      outcome.status === 'rejected' ? [String(outcome.reason)] : [],
    );
    expect(failures).toEqual([]);
    const [ha, hb] = [first, second].map(
      (outcome) => (outcome as PromiseFulfilledResult<LockHandle>).value,
    ) as [LockHandle, LockHandle];
    expect(ha.fencingToken).not.toBe(hb.fencingToken);
    expect(ha.fencingToken).toBeGreaterThan(12n);
    expect(hb.fencingToken).toBeGreaterThan(12n);
    // Tokens never go backwards: a later permit counts past both.
    const later = await provider(raw).createSemaphore(name, 3).acquire({ timeout: 0 });
    expect(later.fencingToken).toBeGreaterThan(ha.fencingToken);
    expect(later.fencingToken).toBeGreaterThan(hb.fencingToken);
    await Promise.all([ha.release(), hb.release(), later.release()]);
  });
});
