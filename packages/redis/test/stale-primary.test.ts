import { BackendUnavailableError } from '@lockkit/core';
import {
  type RedisSentinelSetup,
  type ServerHandle,
  startRedisSentinel,
  startRedisServers,
} from '@lockkit/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider, redisLockKeys } from '../src/index.js';
import { command, replicasOnline, tokenOf } from './failover-support.js';
import { eventually, scaled } from './support.js';

// A promotion does not tell the old primary: it keeps taking writes (and its other replicas
// keep confirming them) until someone demotes it. These cases replay that window step by step
// — the replica is promoted with REPLICAOF NO ONE, as Sentinel's first step does — so what the
// acknowledgement buys there is shown without racing a Sentinel.

const providers: RedisLockProvider[] = [];
const servers: ServerHandle[] = [];
let sentinel: RedisSentinelSetup | undefined;

afterAll(async () => {
  await Promise.all(providers.map((each) => each.close()));
  await Promise.all(servers.map((server) => server.stop()));
  await sentinel?.stop();
});

/**
 * A refusal here waits out `replicaTimeoutMs`, and a grant on a loaded machine may need most
 * of it, so it is generous; the lease (nothing here waits for one to expire) is three times it.
 */
function provider(nodes: string, minReplicas: number): RedisLockProvider {
  const created = createRedisLockProvider({
    nodes,
    leaseMs: scaled(3000),
    commandTimeoutMs: 250,
    ...(minReplicas > 0 && { minReplicas, replicaTimeoutMs: scaled(1000) }),
  });
  providers.push(created);
  return created;
}

/** A primary with two replicas (`primaryArguments` go to the primary), all links up. */
async function startShard(primaryArguments: readonly string[] = []) {
  const [primary] = await startRedisServers(1, {
    useEnvironment: false,
    extraArguments: primaryArguments,
  });
  servers.push(primary as ServerHandle);
  const replicas = await startRedisServers(2, {
    useEnvironment: false,
    extraArguments: ['--replicaof', '127.0.0.1', String(primary?.port)],
  });
  servers.push(...replicas);
  await replicasOnline(primary as ServerHandle, 2);
  return { primary: primary as ServerHandle, promoted: replicas[0] as ServerHandle };
}

/** Promotes `replica` the way Sentinel starts a failover; the old primary is not told. */
async function promote(primary: ServerHandle, replica: ServerHandle): Promise<void> {
  await command(replica, 'REPLICAOF', 'NO', 'ONE');
  await eventually(async () => {
    const info = String(await command(primary, 'INFO', 'replication'));
    return info.includes('connected_slaves:1');
  }, 5000);
}

describe('a primary that was replaced but not yet told', { timeout: 60_000 }, () => {
  it('minReplicas 1 of 2 replicas: the other replica confirms a grant the promoted one never sees, and its token is handed out twice', async () => {
    const { primary, promoted } = await startShard();
    // Confirmed by both replicas, so the promoted one counts from it.
    const before = await tokenOf(provider(primary.url, 2), 'stale-1');
    const old = provider(primary.url, 1);
    await promote(primary, promoted);
    const lost = await tokenOf(old, 'stale-1'); // confirmed by the replica that was not promoted
    expect(lost).toBe(before + 1n);
    const again = await tokenOf(provider(promoted.url, 0), 'stale-1');
    expect(again).toBe(lost); // the hazard: minReplicas below the replica count
  });

  it('minReplicas = every replica: the stale primary cannot get a grant confirmed, so no token repeats', async () => {
    const { primary, promoted } = await startShard();
    const old = provider(primary.url, 2);
    const before = await tokenOf(old, 'stale-2');
    await promote(primary, promoted);
    const refused = old.createLock('stale-2').tryAcquire();
    await expect(refused).rejects.toThrow(BackendUnavailableError);
    await expect(refused).rejects.toThrow(/1 of 2 replicas acknowledged acquire-mutex/);
    const after = await tokenOf(provider(promoted.url, 0), 'stale-2');
    expect(after).toBe(before + 1n); // the next token; none was handed out on the old primary
  });

  it('min-replicas-to-write = every replica on the server: the stale primary refuses the grant, even to a client without acknowledgement', async () => {
    const { primary, promoted } = await startShard(['--min-replicas-to-write', '2']);
    const before = await tokenOf(provider(primary.url, 2), 'stale-3'); // on both replicas
    const old = provider(primary.url, 0);
    await promote(primary, promoted);
    const refused = old.createLock('stale-3').tryAcquire();
    await expect(refused).rejects.toThrow(BackendUnavailableError);
    await expect(refused).rejects.toThrow(/NOREPLICAS/);
    const after = await tokenOf(provider(promoted.url, 0), 'stale-3');
    expect(after).toBe(before + 1n);
  });
});

describe('Sentinel: leaving a primary the Sentinels replaced', { timeout: 90_000 }, () => {
  it('with acknowledgement, the first unconfirmed grant on the old primary makes the client ask the Sentinels again', async () => {
    sentinel = await startRedisSentinel({ replicas: 2 });
    const locks = provider(sentinel.url, 1);
    const before = await tokenOf(locks, 'stale-sentinel'); // connected to the first primary
    const old = await sentinel.primary();
    const promoted = await sentinel.failover();
    // The other replica follows the new primary; the old one still thinks it is the primary
    // (the Sentinels demote it only some 10 s later) and has no replica left.
    await replicasOnline(promoted, 1);
    const stale = async (): Promise<boolean> => {
      const info = String(await command(old, 'INFO', 'replication'));
      return info.includes('role:master') && info.includes('connected_slaves:0');
    };
    expect(await stale()).toBe(true);
    const refused = locks.createLock('stale-sentinel').tryAcquire();
    await expect(refused).rejects.toThrow(/0 of 1 replicas acknowledged acquire-mutex/);
    // The next attempt goes where the Sentinels point now, while the old primary still has
    // not learned it was replaced.
    const granted = await locks.createLock('stale-sentinel').tryAcquire();
    expect(granted).not.toBeNull();
    await granted?.release();
    expect(granted?.fencingToken).toBeGreaterThan(before);
    expect(await stale()).toBe(true);
    // Served by the promoted node: its counter holds the token.
    const fence = redisLockKeys('', 'mutex', 'stale-sentinel').fence;
    expect(await command(promoted, 'GET', fence)).toBe(String(granted?.fencingToken));
  });
});
