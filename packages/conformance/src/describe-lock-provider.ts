import { describe, expect, it } from 'vitest';
import { argumentCases } from './cases/arguments.js';
import { closeCases } from './cases/close.js';
import { compositeCases } from './cases/composite.js';
import { crossProcessCases } from './cases/cross-process.js';
import { electionCases } from './cases/election.js';
import { exclusionCases } from './cases/exclusion.js';
import { handOverCases } from './cases/hand-over.js';
import { inspectionCases } from './cases/inspection.js';
import { leakCases } from './cases/leaks.js';
import { leaseControlCases } from './cases/lease-control.js';
import { lostAndFencingCases } from './cases/lost-and-fencing.js';
import { nameCases } from './cases/names.js';
import { namespaceCases } from './cases/namespaces.js';
import { orderingCases } from './cases/ordering.js';
import { outageCases } from './cases/outage.js';
import { readWriteCases } from './cases/read-write.js';
import { readWriteWaitingCases } from './cases/read-write-waiting.js';
import { semaphoreCases } from './cases/semaphore.js';
import { timingCases } from './cases/timing.js';
import { timingBoundCases } from './cases/timing-bounds.js';
import { upgradeableCases } from './cases/upgradeable.js';
import { waiterCases } from './cases/waiters.js';
import { weightedPermitCases } from './cases/weighted-permits.js';
import type { ConformanceOptions } from './options.js';
import { Fixture, subjects } from './support.js';

/**
 * Registers the lockkit conformance suite for a provider (call it at the top level of a
 * vitest test file). Capabilities are read from a provider the suite creates once; cases
 * whose fault hook or capability is missing are skipped with the reason in their title.
 */
export function describeLockProvider(options: ConformanceOptions): void {
  const timeScale = options.timeScale ?? 1;
  if (!(timeScale > 0)) throw new RangeError('timeScale must be a positive number');
  describe(`lockkit conformance: ${options.name}`, async () => {
    const probe = await options.createProvider();
    const { capabilities, backend } = probe;
    await probe.close();
    const fx = new Fixture(options);

    it('declares its backend id and capabilities', () => {
      expect(typeof backend).toBe('string');
      expect(backend.length).toBeGreaterThan(0);
      const flags = ['crossProcess', 'leases', 'fifo', 'weightedPermits', 'handOver'] as const;
      for (const key of flags) {
        expect(typeof capabilities[key]).toBe('boolean');
      }
      expect(capabilities.minLeaseMs).toBeGreaterThan(0);
      expect(capabilities.lostDetectionMs).toBeGreaterThanOrEqual(0);
      expect(capabilities.abandonedReleaseMs).toBeGreaterThanOrEqual(0);
      expect(capabilities.unavailableMs).toBeGreaterThanOrEqual(0);
    });

    argumentCases(fx);
    nameCases(fx);
    namespaceCases(fx);
    closeCases(fx);
    for (const subject of subjects) {
      describe(subject.label, () => {
        exclusionCases(fx, subject);
        timingCases(fx, subject);
        timingBoundCases(fx, subject);
        waiterCases(fx, subject);
        lostAndFencingCases(fx, subject);
        crossProcessCases(fx, subject, capabilities.crossProcess);
      });
    }
    readWriteCases(fx);
    readWriteWaitingCases(fx);
    upgradeableCases(fx, capabilities.inspection === true);
    orderingCases(fx, capabilities.fifo, capabilities.leases);
    semaphoreCases(fx);
    weightedPermitCases(fx, capabilities.weightedPermits === true);
    leaseControlCases(fx, capabilities.minLeaseMs ?? Number.POSITIVE_INFINITY, capabilities.leases);
    handOverCases(fx, capabilities.handOver === true, capabilities.weightedPermits === true);
    inspectionCases(fx, capabilities.inspection === true, capabilities.weightedPermits === true);
    compositeCases(fx);
    electionCases(fx, capabilities.crossProcess);
    leakCases(fx);
    outageCases(fx);
  });
}
