import { describe, expect, it } from 'vitest';
import { topologyBackendIds } from '../src/backends/backend-ids.js';
import { faultPlan } from '../src/chaos/fault-plan.js';
import { SeededRandom } from '../src/support/seeded-random.js';

describe('faultPlan for Redis Cluster and Sentinel', () => {
  for (const backend of topologyBackendIds) {
    const kinds = backend.startsWith('redis-cluster')
      ? ['failover', 'kill-primary', 'lagging-takeover', 'reshard']
      : ['failover', 'kill-primary'];

    it(`${backend}: every cycle injects each topology fault once (${kinds.join(', ')}), nothing else`, () => {
      const plan = faultPlan(backend, false, 3, new SeededRandom(7));
      expect(plan).toHaveLength(3 * kinds.length);
      for (const kind of kinds) expect(plan.filter((each) => each === kind)).toHaveLength(3);
    });

    it(`${backend}: the quick plan injects each topology fault once`, () => {
      expect(faultPlan(backend, true, 5, new SeededRandom(1)).sort()).toEqual(kinds);
    });
  }

  it('the same seed gives the same order', () => {
    const once = faultPlan('redis-cluster', false, 4, new SeededRandom(3));
    expect(faultPlan('redis-cluster', false, 4, new SeededRandom(3))).toEqual(once);
  });
});
