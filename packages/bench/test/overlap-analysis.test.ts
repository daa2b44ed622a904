import { describe, expect, it } from 'vitest';
import { findOverlaps } from '../src/chaos/overlap-analysis.js';
import { fault, grant } from './grant-fixtures.js';

const none = new Map<number, number>();

describe('findOverlaps', () => {
  it('finds nothing in a clean sequence of holders', () => {
    const grants = [
      grant({ pid: 1, token: 1n, acquiredAt: 100 }),
      grant({ pid: 2, token: 2n, acquiredAt: 106 }),
      grant({ pid: 1, token: 3n, acquiredAt: 112 }),
    ];
    expect(findOverlaps(grants, [], none, 1000)).toEqual([]);
  });

  it('reports an unexplained overlap as not tolerated, the lower token as stale', () => {
    const older = grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: 120 });
    const newer = grant({ pid: 2, token: 2n, acquiredAt: 110 });
    const [overlap, ...rest] = findOverlaps([newer, older], [], none, 1000);
    expect(rest).toEqual([]);
    expect(overlap?.stale).toBe(older);
    expect(overlap?.current).toBe(newer);
    expect(overlap?.lagMs).toBe(10);
    expect(overlap?.tolerated).toBe(false);
  });

  it('tolerates a frozen holder that notices within the bound after SIGCONT', () => {
    const frozen = grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: 3003, lostAt: 3002 });
    const taker = grant({ pid: 2, token: 2n, acquiredAt: 1600 });
    const stop = fault({ kind: 'stop-holder', startedAt: 101, clearedAt: 3000, pids: [1] });
    const [overlap] = findOverlaps([frozen, taker], [stop], none, 750);
    expect(overlap?.explainedBy).toBe(stop);
    expect(overlap?.lagFrom).toBe('resume');
    expect(overlap?.lagMs).toBe(2);
    expect(overlap?.tolerated).toBe(true);
  });

  it('does not let a fault on another process explain an overlap', () => {
    const holder = grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: 3003 });
    const taker = grant({ pid: 2, token: 2n, acquiredAt: 1600 });
    const stop = fault({ kind: 'stop-holder', startedAt: 101, clearedAt: 3000, pids: [3] });
    expect(findOverlaps([holder, taker], [stop], none, 750)[0]?.tolerated).toBe(false);
  });

  it('flags a holder that believed beyond the declared detection window', () => {
    const holder = grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: 2000 });
    const taker = grant({ pid: 2, token: 2n, acquiredAt: 200 });
    const drop = fault({ kind: 'drop-connections', startedAt: 150, clearedAt: 160 });
    const [overlap] = findOverlaps([holder, taker], [drop], none, 1500);
    expect(overlap?.lagMs).toBe(1800);
    expect(overlap?.tolerated).toBe(false);
  });

  it('treats a stale grant (lower token, returned later) as the stale side', () => {
    const current = grant({ pid: 2, token: 9n, acquiredAt: 100, exitAt: 110 });
    const stale = grant({
      pid: 1,
      token: 5n,
      acquiredAt: 104,
      requestedAt: 10,
      exitAt: 110,
      lostAt: 106,
    });
    const stop = fault({ kind: 'stop-holder', startedAt: 20, clearedAt: 103, pids: [1] });
    const [overlap] = findOverlaps([current, stale], [stop], none, 1500);
    expect(overlap?.stale).toBe(stale);
    expect(overlap?.lagFrom).toBe('own-grant');
    expect(overlap?.lagMs).toBe(2);
    expect(overlap?.tolerated).toBe(true);
  });

  it('on a duplicate token, takes the earlier grant as the stale one', () => {
    const frozen = grant({ pid: 1, token: 7n, acquiredAt: 100, exitAt: 3003, lostAt: 3002 });
    const twin = grant({ pid: 2, token: 7n, acquiredAt: 1600 });
    const stop = fault({ kind: 'stop-holder', startedAt: 101, clearedAt: 3000, pids: [1] });
    const [overlap] = findOverlaps([twin, frozen], [stop], none, 750);
    expect(overlap?.stale).toBe(frozen);
    expect(overlap?.tolerated).toBe(true);
  });

  it('ends a killed holder at its SIGKILL', () => {
    const killed = grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: undefined });
    const next = grant({ pid: 2, token: 2n, acquiredAt: 1000 });
    expect(findOverlaps([killed, next], [], new Map([[1, 101]]), 750)).toEqual([]);
  });

  it('counts the stale holder writes after the takeover', () => {
    const stale = grant({ pid: 1, token: 1n, acquiredAt: 100, exitAt: 3004 });
    stale.writes.push(
      { type: 'enter', at: 100, receivedAt: 100, aborted: false, accepted: true, seq: 1 },
      { type: 'write', at: 3001, receivedAt: 3001, aborted: false, accepted: false, seq: 2 },
    );
    const taker = grant({ pid: 2, token: 2n, acquiredAt: 1600 });
    const stop = fault({ kind: 'stop-holder', startedAt: 101, clearedAt: 3000, pids: [1] });
    const [overlap] = findOverlaps([stale, taker], [stop], none, 750);
    expect(overlap?.staleWritesRejected).toBe(1);
    expect(overlap?.staleWritesAccepted).toBe(0);
  });
});
