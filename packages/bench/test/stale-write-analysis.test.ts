import { describe, expect, it } from 'vitest';
import { ChaosLedger } from '../src/chaos/chaos-ledger.js';
import { staleWrites } from '../src/chaos/stale-write-analysis.js';

/** A ledger fed with a term's claim (`enter`) and writes, in the order given. */
function run(
  steps: readonly { pid: number; token: bigint; type: 'enter' | 'write'; at: number }[],
): ChaosLedger {
  const ledger = new ChaosLedger();
  for (const [index, step] of steps.entries()) {
    ledger.receive(
      step.pid,
      {
        type: step.type,
        id: index + 1,
        lock: 'leader-a',
        grant: 1,
        token: step.token,
        at: step.at,
        aborted: false,
        ...(step.type === 'enter' && { requestedAt: step.at - 1 }),
      },
      step.at,
    );
  }
  return ledger;
}

describe('staleWrites', () => {
  it('a paused leader’s write after its successor’s claim is refused, and counted as refused', () => {
    const ledger = run([
      { pid: 1, token: 5n, type: 'enter', at: 10 },
      { pid: 2, token: 6n, type: 'enter', at: 3000 },
      { pid: 1, token: 5n, type: 'write', at: 3010 },
      { pid: 2, token: 6n, type: 'write', at: 3012 },
    ]);
    const { counts, violations } = staleWrites(ledger.grants.values(), 0);
    expect(counts).toEqual({ accepted: 0, refused: 1 });
    expect(violations).toEqual([]);
  });

  it('two grants in flight together are ordered by token, not by which reply came back first', () => {
    // The takeover (token 6) returned 0.5 ms before the displaced holder's own grant (token 5,
    // asked for earlier) did; the fence accepted the displaced holder's claim first.
    const ledger = run([
      { pid: 1, token: 5n, type: 'enter', at: 100.5 },
      { pid: 2, token: 6n, type: 'enter', at: 100 },
      { pid: 2, token: 6n, type: 'write', at: 103 },
      { pid: 1, token: 5n, type: 'write', at: 104 },
    ]);
    const { counts, violations } = staleWrites(ledger.grants.values(), 0);
    expect(violations).toEqual([]);
    expect(counts).toEqual({ accepted: 0, refused: 1 });
  });

  it('a repeated epoch lets the stale leader’s write through: a violation', () => {
    const ledger = run([
      { pid: 1, token: 5n, type: 'enter', at: 10 },
      { pid: 2, token: 5n, type: 'enter', at: 3000 },
      { pid: 1, token: 5n, type: 'write', at: 3010 },
    ]);
    const { counts, violations } = staleWrites(ledger.grants.values(), 0);
    expect(counts).toEqual({ accepted: 1, refused: 0 });
    expect(violations.map((violation) => violation.kind)).toEqual(['stale-write-accepted']);
  });

  it('a backward epoch: the successor is refused and the stale leader’s writes go on being accepted', () => {
    const ledger = run([
      { pid: 1, token: 5n, type: 'enter', at: 10 },
      { pid: 2, token: 4n, type: 'enter', at: 3000 },
      { pid: 1, token: 5n, type: 'write', at: 3010 },
    ]);
    // The successor never got a write in, so nothing is stale at the fence: the token checks
    // (token-order) report this one.
    expect(staleWrites(ledger.grants.values(), 0).counts).toEqual({ accepted: 0, refused: 0 });
  });

  it('a stale write that reaches the fence before the successor’s claim is not stale there', () => {
    const ledger = run([
      { pid: 1, token: 5n, type: 'enter', at: 10 },
      { pid: 2, token: 6n, type: 'enter', at: 3000 },
    ]);
    // pid 1 stated its write before pid 2's claim arrived: ordered before every write of 6.
    const [first] = ledger.grants.values();
    first!.writes.unshift({
      type: 'write',
      at: 2999,
      receivedAt: 2999,
      aborted: false,
      accepted: true,
      seq: 0,
    });
    expect(staleWrites(ledger.grants.values(), 0).counts).toEqual({ accepted: 0, refused: 0 });
  });
});
