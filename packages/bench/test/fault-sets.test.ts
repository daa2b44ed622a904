import { describe, expect, it } from 'vitest';
import { networkFaultPlan } from '../src/chaos/chaos-network-faults.js';
import { parseCommandLine } from '../src/support/command-line.js';
import { SeededRandom } from '../src/support/seeded-random.js';

describe('pnpm chaos --faults', () => {
  it('defaults to the standard set and takes network and clock', () => {
    expect(parseCommandLine([]).faults).toBe('standard');
    expect(parseCommandLine(['--faults', 'network']).faults).toBe('network');
    expect(parseCommandLine(['--faults=clock']).faults).toBe('clock');
    expect(() => parseCommandLine(['--faults', 'netem'])).toThrow(/unknown fault set "netem"/);
  });

  it('plans the Redlock minority and majority cuts, and nothing for the file backend', () => {
    const random = new SeededRandom(1);
    expect(networkFaultPlan('redlock', true, 1, random)).toEqual([
      'partition-minority',
      'partition-majority',
      'lossy-holder',
      'delay-server',
    ]);
    expect(networkFaultPlan('postgres', true, 1, random)).toEqual([
      'partition-holder',
      'lossy-holder',
      'delay-server',
    ]);
    expect(networkFaultPlan('redis', false, 3, random)).toHaveLength(9);
    expect(networkFaultPlan('file', false, 3, random)).toEqual([]);
  });
});
