import { describe, expect, it } from 'vitest';
import { ChaosLedger } from '../src/chaos/chaos-ledger.js';
import { releaseViolations, tokenViolations } from '../src/chaos/token-analysis.js';
import { grant } from './grant-fixtures.js';

const none = new Map<number, number>();
const noFences = new Map();

describe('tokenViolations', () => {
  it('accepts increasing tokens', () => {
    const grants = [
      grant({ pid: 1, token: 1n, acquiredAt: 100 }),
      grant({ pid: 2, token: 2n, acquiredAt: 106 }),
    ];
    expect(tokenViolations(grants, noFences, none, 0)).toEqual([]);
  });

  it('flags a token not above one of a grant that was over before the request', () => {
    const grants = [
      grant({ pid: 1, token: 7n, acquiredAt: 100 }),
      grant({ pid: 2, token: 3n, acquiredAt: 120 }),
    ];
    const [violation] = tokenViolations(grants, noFences, none, 0);
    expect(violation?.kind).toBe('token-order');
  });

  it('does not compare with a grant that was still held when the request was made', () => {
    const grants = [
      grant({ pid: 1, token: 7n, acquiredAt: 100, exitAt: 130 }),
      grant({ pid: 2, token: 3n, acquiredAt: 131, requestedAt: 20 }),
    ];
    expect(tokenViolations(grants, noFences, none, 0)).toEqual([]);
  });

  it('flags a lower token returned long after a grant whose holder was still frozen', () => {
    const frozen = grant({ pid: 1, token: 13n, acquiredAt: 100, exitAt: 3000, lostAt: 2990 });
    const next = grant({ pid: 2, token: 10n, acquiredAt: 1600, requestedAt: 90 });
    const [violation, ...rest] = tokenViolations([frozen, next], noFences, none, 0);
    expect(rest).toEqual([]);
    expect(violation?.kind).toBe('token-order');
    expect(violation?.detail).toContain('token 10');
  });

  it('accepts an old, lower-token grant returned late to a frozen process', () => {
    const current = grant({ pid: 2, token: 9n, acquiredAt: 100 });
    const stale = grant({ pid: 1, token: 5n, acquiredAt: 3001, requestedAt: 10 });
    const stop = {
      kind: 'stop-holder' as const,
      description: 'stop',
      startedAt: 50,
      clearedAt: 3000,
      pids: [1],
      recoveryBoundMs: 3000,
    };
    expect(tokenViolations([current, stale], noFences, none, 0, [stop])).toEqual([]);
  });

  it('accepts an old, lower-token grant returned late over a lossy link, not over a healthy one', () => {
    const current = grant({ pid: 2, token: 9n, acquiredAt: 100 });
    const late = grant({ pid: 1, token: 5n, acquiredAt: 1800, requestedAt: 10 });
    const loss = {
      kind: 'lossy-holder' as const,
      description: 'drop 30 %',
      startedAt: 50,
      clearedAt: 3000,
      pids: [1],
      recoveryBoundMs: 4000,
    };
    expect(tokenViolations([current, late], noFences, none, 0, [loss])).toEqual([]);
    const elsewhere = { ...loss, pids: [3] };
    expect(
      tokenViolations([current, late], noFences, none, 0, [elsewhere]).map((v) => v.kind),
    ).toEqual(['token-order']);
  });

  it('flags duplicate tokens', () => {
    const grants = [
      grant({ pid: 1, token: 4n, acquiredAt: 100 }),
      grant({ pid: 2, token: 4n, acquiredAt: 120 }),
    ];
    expect(tokenViolations(grants, noFences, none, 0).map((violation) => violation.kind)).toContain(
      'duplicate-token',
    );
  });

  it('audits the fence: what it accepted never goes down', () => {
    const ledger = new ChaosLedger();
    const report = (token: bigint, id: number) =>
      ledger.receive(
        1,
        { type: 'write', id, lock: 'a', grant: 1, token, at: 1, aborted: false },
        2,
      );
    expect(report(5n, 1)).toBe(true);
    expect(report(4n, 2)).toBe(false);
    expect(report(5n, 3)).toBe(true);
    expect(report(6n, 4)).toBe(true);
    expect(ledger.fences.get('a')).toMatchObject({ accepted: 3, rejected: 1, maxToken: 6n });
    expect(tokenViolations([], ledger.fences, none, 0)).toEqual([]);
    ledger.fences.get('a')?.acceptedTokens.push(2n);
    expect(tokenViolations([], ledger.fences, none, 0)[0]?.kind).toBe('stale-accepted');
  });
});

describe('releaseViolations', () => {
  it('flags release() → true after a higher token had been granted', () => {
    const grants = [
      grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: 200 }),
      grant({ pid: 2, token: 2n, acquiredAt: 150 }),
    ];
    expect(releaseViolations(grants, 0).map((violation) => violation.kind)).toEqual([
      'release-lied',
    ]);
  });

  it('does not call a release a lie because of an earlier, higher token', () => {
    const grants = [
      grant({ pid: 1, token: 13n, acquiredAt: 100, exitAt: 3000, releaseResult: false }),
      grant({ pid: 2, token: 10n, acquiredAt: 1600, exitAt: 1605 }),
    ];
    expect(releaseViolations(grants, 0)).toEqual([]);
  });

  it('does not blame the real holder for a stale grant that returned late', () => {
    const grants = [
      grant({ pid: 1, token: 9n, acquiredAt: 100, exitAt: 200 }),
      grant({ pid: 2, token: 2n, acquiredAt: 150, releaseResult: false }),
    ];
    expect(releaseViolations(grants, 0)).toEqual([]);
  });

  it('flags a release that threw', () => {
    const grants = [grant({ pid: 1, token: 1n, acquiredAt: 100, releaseResult: 'threw' })];
    expect(releaseViolations(grants, 0)[0]?.kind).toBe('release-threw');
  });
});
