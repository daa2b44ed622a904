/**
 * A real network partition of a 3-member ensemble: each member runs in a network namespace of
 * its own (the testkit's `startZooKeeperEnsemble`), and `member.partition()` cuts a follower
 * off from the other members and from this process while it keeps running. Needs root and
 * iproute2; skipped, with the reason printed, where the namespaces cannot be made.
 */
import { LockLostError } from '@lockkit/core';
import {
  NetworkNamespacesUnavailableError,
  startZooKeeperEnsemble,
  type ZooKeeperEnsemble,
  type ZooKeeperMember,
} from '@lockkit/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZooKeeperLockProvider } from '../src/index.js';
import { eventually, testProvider } from './support.js';

const timeScale = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

const started = await startZooKeeperEnsemble(3).catch((error: unknown) => {
  if (error instanceof NetworkNamespacesUnavailableError) return error;
  throw error;
});
const unavailable = started instanceof Error ? started.message : undefined;
if (unavailable) console.warn(`ZooKeeper partition tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('a 3-member ensemble with a follower cut off', () => {
  const ensemble = started as ZooKeeperEnsemble;
  const providers: ZooKeeperLockProvider[] = [];
  const provider = (members: readonly ZooKeeperMember[]): ZooKeeperLockProvider => {
    const hosts = members.map((member) => `${member.host}:${member.port}`);
    const created = testProvider(`zookeeper://${hosts.join(',')}`);
    providers.push(created);
    return created;
  };

  afterAll(async () => {
    await Promise.all(providers.map((each) => each.close()));
    await ensemble.stop();
  });

  it('the holder connected to the cut-off follower is told within lostDetectionMs and before anyone else gets its lock; holds through the others stay held', async () => {
    const leader = await ensemble.leader();
    const [follower, other] = ensemble.members.filter((member) => member !== leader) as [
      ZooKeeperMember,
      ZooKeeperMember,
    ];
    const viaCut = provider([follower]);
    const viaOthers = provider([leader, other]);
    const { lostDetectionMs } = viaCut.capabilities;
    const holder = await viaCut.createLock('cut').acquire({ timeout: 5000 * timeScale });
    const kept = await viaOthers.createLock('kept').acquire({ timeout: 5000 * timeScale });
    const lost = new Promise<number>((resolve) =>
      holder.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
    );

    await follower.partition();
    const cutAt = performance.now();
    try {
      // The contender, through the members that keep their quorum, waits for the holder's
      // session to expire there (its ephemeral node goes with it).
      const contender = await viaOthers
        .createLock('cut')
        .acquire({ timeout: (lostDetectionMs + 5000) * timeScale });
      const grantedAt = performance.now();
      // No overlap: the holder stopped believing before the contender was granted.
      expect(holder.signal.aborted, 'the holder still believed when the lock was granted').toBe(
        true,
      );
      const lostAt = await lost;
      console.log(
        `follower cut off: its client's hold reported lost ${Math.round(lostAt - cutAt)} ms after the cut (declared lostDetectionMs ${lostDetectionMs}), the lock granted through the others ${Math.round(grantedAt - cutAt)} ms after it`,
      );
      expect(LockLostError.isInstance(holder.signal.reason)).toBe(true);
      expect(lostAt).toBeLessThanOrEqual(grantedAt);
      expect(lostAt - cutAt).toBeLessThanOrEqual(lostDetectionMs * timeScale);
      expect(contender.fencingToken).toBeGreaterThan(holder.fencingToken);
      expect(kept.signal.aborted, `"kept" lost: ${String(kept.signal.reason)}`).toBe(false);
      expect(await contender.release()).toBe(true);
      expect(await kept.release()).toBe(true);
    } finally {
      await follower.heal();
    }
    // Healed: the follower serves again and has caught up (it sees the lock free).
    await eventually(
      async () => (await follower.mode()) === 'follower',
      20_000 * timeScale,
      'the healed follower serving',
    );
    const healedSide = provider([follower]);
    const after = await healedSide.createLock('cut').acquire({ timeout: 10_000 * timeScale });
    expect(after.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(await after.release()).toBe(true);
    expect(await holder.release()).toBe(false);
  }, 60_000);
});
