import { LockLostError } from '@lockkit/core';
import { expect, it } from 'vitest';
import { acquirerFor, type Fixture, type LockSpec, titled } from '../support.js';
import { cases, resume } from './hand-over-support.js';

/**
 * A token is resumed once (inside the hand-over describe): the first resume wins, and any
 * later resume of the same token is refused with `LockLostError`, as is the exporter.
 */
export function resumeOnceCases(fx: Fixture, handOver: boolean, weighted: boolean): void {
  const skip = handOver ? undefined : 'capabilities.handOver is false';
  const weightedSkip = skip ?? (weighted ? undefined : 'capabilities.weightedPermits is not true');
  const weightedCase = { kind: 'semaphore', maxCount: 2 } as const;
  const once: readonly { spec: LockSpec; rival: LockSpec; permits?: number }[] = [
    ...cases,
    { spec: weightedCase, rival: weightedCase, permits: 2 },
  ];
  for (const { spec, rival, permits } of once) {
    const what = permits ? `semaphore of ${permits} permits` : spec.kind;
    const run = handOver && (permits === undefined || weighted);
    it.runIf(run)(
      titled(
        `${what}: a token resumes once; a second resume is refused with LockLostError`,
        permits ? weightedSkip : skip,
      ),
      async () => {
        const [a, b, c] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const name = fx.name(`hand-over-once-${spec.kind}-${permits ?? 1}`);
        const timeout = fx.ms(5000);
        const held = permits
          ? await a.createSemaphore(name, spec.maxCount).acquire({ timeout, permits })
          : await acquirerFor(a, name, spec).acquire({ timeout });
        const token = held.export();
        const resumed = await resume(b, name, spec, token);
        expect(resumed.fencingToken).toBe(held.fencingToken);
        // The first resume won: the same token again, elsewhere or here, is refused.
        await expect(resume(c, name, spec, token)).rejects.toSatisfy(LockLostError.isInstance);
        await expect(resume(b, name, spec, token)).rejects.toSatisfy(LockLostError.isInstance);
        expect(resumed.signal.aborted).toBe(false);
        // The refused resumes took nothing from the hold.
        expect(await acquirerFor(c, name, rival).tryAcquire()).toBeNull();
        if (Number.isFinite(b.capabilities.minLeaseMs)) {
          expect(await resumed.extend()).toBe(true);
        }
        expect(await held.release()).toBe(false);
        expect(await resumed.release()).toBe(true);
      },
      30_000,
    );
  }
}
