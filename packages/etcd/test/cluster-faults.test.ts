import { LockLostError } from '@lockkit/core';
import { type EtcdCluster, type ServerHandle, startEtcdCluster } from '@lockkit/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdLockProvider } from '../src/index.js';
import { abortedWithin, eventually, testProvider } from './support.js';

// Leases of 3 s: a leader election (about a second with these members) fits well inside.
const sessionTtlMs = 3000;

describe('a 3-member cluster that loses members', () => {
  let cluster: EtcdCluster;
  const providers: EtcdLockProvider[] = [];
  const provider = (): EtcdLockProvider => {
    const created = testProvider(cluster.url, { sessionTtlMs });
    providers.push(created);
    return created;
  };
  const hasLeader = (): Promise<boolean> =>
    cluster.leader().then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
  });
  afterEach(async () => {
    await Promise.all(providers.splice(0).map((each) => each.close()));
    for (const member of cluster.members) {
      if (member.pid === undefined || !(await alive(member))) await member.restart();
    }
    await eventually(hasLeader, 10_000, 'a leader');
  });
  afterAll(() => cluster.stop());

  for (const which of ['the leader', 'a follower'] as const) {
    it(`holds survive when ${which} is killed, and a queued waiter still gets its turn`, async () => {
      const holderSide = provider();
      const waiterSide = provider();
      const mutex = await holderSide.createLock('mutex').acquire({ timeout: 5000 });
      const reader = await holderSide.createReadWriteLock('rw').acquireRead({ timeout: 5000 });
      const permit = await holderSide.createSemaphore('sem', 1).acquire({ timeout: 5000 });
      const waiting = waiterSide.createLock('mutex').acquire({ timeout: 20_000 });

      const leader = await cluster.leader();
      const victim =
        which === 'the leader' ? leader : cluster.members.find((member) => member !== leader)!;
      await victim.kill();
      await eventually(hasLeader, 10_000, 'a new leader');
      // Had the lease been lost with the member, the signal would say so within this bound.
      const lost = abortedWithin(mutex.signal, holderSide.capabilities.lostDetectionMs).then(
        (reason) => reason,
        () => undefined,
      );
      expect(await lost, 'the mutex was reported lost').toBeUndefined();
      for (const handle of [mutex, reader, permit]) expect(handle.signal.aborted).toBe(false);

      // The keys are still there: the releases find them, and the waiter is handed the lock.
      expect(await reader.release()).toBe(true);
      expect(await permit.release()).toBe(true);
      expect(await mutex.release()).toBe(true);
      const next = await waiting;
      expect(next.fencingToken).toBeGreaterThan(mutex.fencingToken);
      expect(await next.release()).toBe(true);
    }, 60_000);
  }

  it('holds are reported lost, in time, when the cluster loses its quorum', async () => {
    const holderSide = provider();
    const handle = await holderSide.createLock('quorum').acquire({ timeout: 5000 });
    const killed: ServerHandle[] = cluster.members.slice(0, 2);
    const started = performance.now();
    for (const member of killed) await member.kill();
    const reason = await abortedWithin(handle.signal, holderSide.capabilities.lostDetectionMs);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(performance.now() - started).toBeLessThanOrEqual(
      holderSide.capabilities.lostDetectionMs,
    );
    expect(await handle.release()).toBe(false);
  }, 60_000);
});

async function alive(member: ServerHandle): Promise<boolean> {
  try {
    process.kill(member.pid!, 0);
    return true;
  } catch {
    return false;
  }
}
