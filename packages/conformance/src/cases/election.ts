import {
  type ILockProvider,
  type Leadership,
  LockLostError,
  LockTimeoutError,
} from '@lockkit/core';
import { leadershipHandle } from '@lockkit/core/backend';
import { describe, expect, it } from 'vitest';
import { spawnHolder } from '../child/spawn-holder.js';
import { abortedWithin, type Fixture, nextWaitFor, titled, track } from '../support.js';

/**
 * A resource that fences its writers by epoch (Kleppmann's fence): it accepts a write only
 * with an epoch at least as large as the largest it has accepted.
 */
class FencedResource {
  #highest = -1n;

  write(epoch: bigint): boolean {
    if (epoch < this.#highest) return false;
    this.#highest = epoch;
    return true;
  }
}

/**
 * Leader election (built by core on the mutex) on this backend: once per backend, not per
 * subject. Every title starts with "election" (run them alone with `-t election`).
 */
export function electionCases(fx: Fixture, crossProcess: boolean): void {
  const loseLock = fx.options.faults?.loseLock;
  const child = fx.options.childProvider;
  const noChild = !crossProcess
    ? 'the backend is in-process only (capabilities.crossProcess = false)'
    : child
      ? undefined
      : 'no childProvider option';

  describe('election', () => {
    it('election: one leader at a time under churn across provider instances; epochs strictly increase', async () => {
      const name = fx.name('election-churn');
      const providers = [await fx.provider(), await fx.provider(), await fx.provider()];
      const epochs: bigint[] = [];
      let leading = 0;
      let mostAtOnce = 0;
      const participant = async (provider: ILockProvider, owner: string): Promise<void> => {
        const election = provider.createElection(name, { owner });
        for (let round = 0; round < 4; round++) {
          const term = await election.campaign({ timeout: fx.ms(10_000) });
          leading += 1;
          mostAtOnce = Math.max(mostAtOnce, leading);
          epochs.push(term.epoch);
          term.signal.addEventListener('abort', () => (leading -= 1), { once: true });
          expect(election.current()).toBe(term);
          // Lead for a moment, so that a second leader would be seen.
          await new Promise((resolve) => setTimeout(resolve, 2));
          expect(term.signal.aborted).toBe(false);
          await term.resign();
        }
      };
      await Promise.all(providers.map((provider, index) => participant(provider, `p${index}`)));
      expect(mostAtOnce).toBe(1);
      expect(leading).toBe(0);
      expect(epochs).toHaveLength(12);
      for (let index = 1; index < epochs.length; index++) {
        expect(epochs[index]!).toBeGreaterThan(epochs[index - 1]!);
      }
    });

    it('election: resign hands over to the waiting campaigner within one round trip + 50 ms', async () => {
      const name = fx.name('election-resign');
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const bound = fx.ms((await fx.roundTripMs(p2)) + 50);
      const leader = await p1.createElection(name).campaign({ timeout: fx.ms(5_000) });
      const follower = p2.createElection(name);
      expect(follower.current()).toBeNull();
      const waited = nextWaitFor(name);
      let predecessorEnded: boolean | undefined;
      const waiting = follower.campaign({ timeout: fx.ms(10_000) }).then((term) => {
        predecessorEnded = leader.signal.aborted;
        return { term, at: performance.now() };
      });
      await waited;
      const resignedAt = performance.now();
      await leader.resign();
      const { term, at } = await waiting;
      expect(at - resignedAt).toBeLessThanOrEqual(bound);
      expect(predecessorEnded).toBe(true);
      expect(term.epoch).toBeGreaterThan(leader.epoch);
      expect(follower.current()).toBe(term);
      await term.resign();
    });

    it.runIf(loseLock)(
      titled(
        "election: a stale leader's late work is refused by epoch, and its signal aborts within the declared bound",
        loseLock ? undefined : 'no faults.loseLock hook',
      ),
      async () => {
        const name = fx.name('election-stale');
        const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const bound = fx.ms(p1.capabilities.lostDetectionMs + 500);
        const resource = new FencedResource();
        const staleElection = p1.createElection(name, { owner: 'stale' });
        const stale = await staleElection.campaign({ timeout: fx.ms(5_000) });
        expect(resource.write(stale.epoch)).toBe(true);
        // The server drops the leader's hold and the leader is not told: as after a pause
        // past its lease or a lost session. It may go on working until its signal fires.
        await loseLock!(leadershipHandle(stale), p1);
        const successor = await p2.createElection(name).campaign({ timeout: bound });
        expect(successor.epoch).toBeGreaterThan(stale.epoch);
        expect(resource.write(successor.epoch)).toBe(true); // the new leader claims the resource
        expect(resource.write(stale.epoch)).toBe(false); // the stale leader's late write
        const reason = await abortedWithin(stale.signal, bound);
        expect(LockLostError.isInstance(reason)).toBe(true);
        expect(staleElection.current()).toBeNull();
        await stale.resign(); // never throws, never frees the successor's lock
        expect(successor.signal.aborted).toBe(false);
        const third = p3.createElection(name).campaign({ timeout: 0 });
        expect(await third.catch((error: unknown) => error)).toBeInstanceOf(LockTimeoutError);
        await successor.resign();
      },
      60_000,
    );

    it.runIf(!noChild)(
      titled(
        'election: a SIGKILLed leader in another process is replaced within the declared bound, by exactly one of two campaigners',
        noChild,
      ),
      async () => {
        const name = fx.name('election-kill');
        const [p1, p2] = [await fx.provider(), await fx.provider()];
        const bound = fx.ms(p1.capabilities.abandonedReleaseMs + 1000);
        const holder = await spawnHolder(
          child!,
          name,
          { kind: 'election', maxCount: 1 },
          fx.ms(20_000),
        );
        fx.defer(() => holder.kill());
        const [e1, e2] = [p1.createElection(name), p2.createElection(name)];
        expect(await e1.campaign({ timeout: 0 }).catch((error: unknown) => error)).toBeInstanceOf(
          LockTimeoutError,
        );
        const campaigns = [
          track(e1.campaign({ timeout: bound + fx.ms(10_000) })),
          track(e2.campaign({ timeout: bound + fx.ms(10_000) })),
        ];
        await holder.kill();
        const killedAt = performance.now();
        const first = await Promise.race(campaigns.map((campaign) => campaign.promise));
        expect(performance.now() - killedAt).toBeLessThanOrEqual(bound);
        expect(first.epoch).toBeGreaterThan(holder.fencingToken);
        // No split brain: the other campaigner is still waiting a moment later.
        await new Promise((resolve) => setTimeout(resolve, fx.ms(100)));
        expect(campaigns.filter((campaign) => campaign.settled)).toHaveLength(1);
        const other = campaigns.find((campaign) => !campaign.settled)!;
        await first.resign();
        const second: Leadership = await other.promise;
        expect(second.epoch).toBeGreaterThan(first.epoch);
        await second.resign();
      },
      120_000,
    );
  });
}
