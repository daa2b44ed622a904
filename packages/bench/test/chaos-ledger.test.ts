import { describe, expect, it } from 'vitest';
import { ChaosLedger } from '../src/chaos/chaos-ledger.js';

describe('ChaosLedger', () => {
  it('tracks a grant from enter to release, and what is open', () => {
    const ledger = new ChaosLedger();
    const base = { lock: 'a', grant: 1, token: 3n };
    ledger.receive(
      7,
      { type: 'enter', id: 1, ...base, at: 10, aborted: false, requestedAt: 8 },
      11,
    );
    expect(ledger.openGrants('a')).toHaveLength(1);
    ledger.receive(7, { type: 'write', id: 2, ...base, at: 12, aborted: false }, 12);
    ledger.receive(7, { type: 'exit', ...base, at: 14, aborted: false }, 14);
    ledger.receive(7, { type: 'released', ...base, at: 15, result: true }, 15);
    const [record] = ledger.grants.values();
    expect(record).toMatchObject({
      requestedAt: 8,
      acquiredAt: 10,
      liveEnd: 14,
      exitAt: 14,
      releaseResult: true,
    });
    expect(ledger.openGrants()).toEqual([]);
    expect(ledger.firstGrantAfter('a', 9)).toBe(record);
    expect(ledger.firstGrantAfter('a', 10)).toBeUndefined();
  });

  it('counts statements stamped after their receipt as clock anomalies', () => {
    const ledger = new ChaosLedger();
    const base = { lock: 'a', grant: 1, token: 3n };
    ledger.receive(7, { type: 'enter', id: 1, ...base, at: 100, aborted: false }, 10);
    expect(ledger.clockAnomalies).toBe(1);
  });

  it('hands the next matching enter to a waiting fault, synchronously', async () => {
    const ledger = new ChaosLedger();
    const seen: number[] = [];
    const waiting = ledger.atNextEnter(
      (record) => record.pid === 8,
      (record) => seen.push(record.pid),
      1000,
    );
    const base = { lock: 'a', token: 3n, at: 10, aborted: false };
    ledger.receive(7, { type: 'enter', id: 1, grant: 1, ...base }, 11);
    expect(seen).toEqual([]);
    ledger.receive(8, { type: 'enter', id: 2, grant: 1, ...base }, 11);
    expect(seen).toEqual([8]);
    await expect(waiting).resolves.toBe(true);
  });
});
