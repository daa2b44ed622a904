import { describe, expect, it } from 'vitest';
import { ChaosLedger } from '../src/chaos/chaos-ledger.js';
import { findOverlaps } from '../src/chaos/overlap-analysis.js';
import { staleWrites } from '../src/chaos/stale-write-analysis.js';
import { releaseViolations } from '../src/chaos/token-analysis.js';
import { writerPreference } from '../src/chaos/writer-preference-analysis.js';
import { fault, grant } from './grant-fixtures.js';

const none = new Map<number, number>();

/** A ledger of one lock's writes, in the order given. */
function fenced(
  capacity: number,
  steps: readonly { pid: number; token: bigint; kind: 'read' | 'write' | 'semaphore' }[],
): { ledger: ChaosLedger; verdicts: (boolean | undefined)[] } {
  const ledger = new ChaosLedger({ capacity });
  const verdicts = steps.map((step, index) =>
    ledger.receive(
      step.pid,
      {
        type: 'enter',
        id: index + 1,
        lock: 'a',
        grant: 1,
        token: step.token,
        kind: step.kind,
        at: 10 * (index + 1),
        aborted: false,
        requestedAt: 10 * (index + 1) - 1,
      },
      10 * (index + 1),
    ),
  );
  return { ledger, verdicts };
}

describe('the fence of an RW lock', () => {
  it('accepts readers in any token order, refuses a reader older than an accepted writer', () => {
    const { verdicts } = fenced(1, [
      { pid: 1, token: 5n, kind: 'read' },
      { pid: 2, token: 4n, kind: 'read' },
      { pid: 3, token: 6n, kind: 'write' },
      { pid: 4, token: 5n, kind: 'read' },
    ]);
    expect(verdicts).toEqual([true, true, true, false]);
  });

  it('refuses a writer older than an accepted reader', () => {
    const { verdicts } = fenced(1, [
      { pid: 1, token: 7n, kind: 'read' },
      { pid: 2, token: 6n, kind: 'write' },
    ]);
    expect(verdicts).toEqual([true, false]);
  });
});

describe('the fence of a semaphore', () => {
  it('accepts a permit below fewer than maxCount accepted tokens, refuses one below maxCount', () => {
    const { verdicts, ledger } = fenced(2, [
      { pid: 1, token: 1n, kind: 'semaphore' },
      { pid: 2, token: 2n, kind: 'semaphore' },
      { pid: 3, token: 3n, kind: 'semaphore' },
      { pid: 2, token: 2n, kind: 'semaphore' },
      { pid: 1, token: 1n, kind: 'semaphore' },
    ]);
    expect(verdicts).toEqual([true, true, true, true, false]);
    expect(ledger.fences.get('a')).toMatchObject({ accepted: 4, rejected: 1 });
  });
});

describe('overlaps of an RW lock', () => {
  it('readers overlapping each other are fine; a writer overlapping a reader is an overlap', () => {
    const readers = [
      grant({ pid: 1, token: 1n, kind: 'read', acquiredAt: 100, exitAt: 120 }),
      grant({ pid: 2, token: 2n, kind: 'read', acquiredAt: 105, exitAt: 125 }),
    ];
    expect(findOverlaps(readers, [], none, 1000)).toEqual([]);
    const writer = grant({ pid: 3, token: 3n, kind: 'write', acquiredAt: 110, exitAt: 130 });
    const overlaps = findOverlaps([...readers, writer], [], none, 1000);
    expect(overlaps.map((overlap) => [overlap.stale.pid, overlap.current.pid])).toEqual([
      [1, 3],
      [2, 3],
    ]);
    expect(overlaps.every((overlap) => !overlap.tolerated)).toBe(true);
  });
});

describe('overlaps of a semaphore', () => {
  const held = (pid: number, token: bigint, acquiredAt: number, exitAt: number) =>
    grant({ pid, token, kind: 'semaphore', acquiredAt, exitAt });

  it('maxCount holders at once are fine; one more pairs the lowest token with the newest', () => {
    const two = [held(1, 1n, 100, 200), held(2, 2n, 110, 200)];
    expect(findOverlaps(two, [], none, 1000, { capacity: 2 })).toEqual([]);
    const three = [...two, held(3, 3n, 150, 200)];
    const [overlap, ...rest] = findOverlaps(three, [], none, 1000, { capacity: 2 });
    expect(rest).toEqual([]);
    expect([overlap?.stale.pid, overlap?.current.pid, overlap?.tolerated]).toEqual([1, 3, false]);
  });

  it('a frozen holder overtaken inside the detection window is tolerated', () => {
    const frozen = held(1, 1n, 100, 3300);
    const stop = fault({ kind: 'stop-holder', startedAt: 120, clearedAt: 3280, pids: [1] });
    const grants = [frozen, held(2, 2n, 110, 4000), held(3, 3n, 1500, 1600)];
    const [overlap] = findOverlaps(grants, [stop], none, 1000, { capacity: 2 });
    expect([overlap?.stale.pid, overlap?.lagFrom, overlap?.tolerated]).toEqual([1, 'resume', true]);
  });

  it('release() → true is a lie only once maxCount newer permits were held at that call', () => {
    const first = held(1, 1n, 100, 200);
    const one = [first, held(2, 2n, 120, 300)];
    expect(releaseViolations(one, 0, { capacity: 2 }, none)).toEqual([]);
    const two = [...one, held(3, 3n, 130, 300)];
    expect(releaseViolations(two, 0, { capacity: 2 }, none).map((v) => v.kind)).toEqual([
      'release-lied',
    ]);
  });

  it('a newer permit whose own release() resolved false does not make an older true one a lie', () => {
    // A process whose wall clock is off claims the others' fresh permit markers as stale;
    // the displaced holder believes until it notices (inside the detection window) and its
    // release() says false. The holder whose marker stayed in place says true, honestly.
    const displaced = { ...held(2, 2n, 120, 300), releaseResult: false as const };
    const grants = [held(1, 1n, 100, 200), displaced, held(3, 3n, 130, 300)];
    expect(releaseViolations(grants, 0, { capacity: 2 }, none)).toEqual([]);
  });
});

describe('stale writes of shared primitives', () => {
  it('a reader’s write after a later writer’s is stale; after a later reader’s it is not', () => {
    const ledger = new ChaosLedger();
    const write = (pid: number, token: bigint, kind: 'read' | 'write', at: number) =>
      ledger.receive(
        pid,
        {
          type: 'enter',
          id: at,
          lock: 'a',
          grant: 1,
          token,
          kind,
          at,
          aborted: false,
          requestedAt: at - 1,
        },
        at,
      );
    write(1, 1n, 'read', 10);
    write(2, 2n, 'read', 20);
    ledger.receive(
      1,
      {
        type: 'write',
        id: 30,
        lock: 'a',
        grant: 1,
        token: 1n,
        kind: 'read',
        at: 30,
        aborted: false,
      },
      30,
    );
    expect(staleWrites(ledger.grants.values(), 0).counts).toEqual({ accepted: 0, refused: 0 });
    write(3, 3n, 'write', 40);
    ledger.receive(
      1,
      {
        type: 'write',
        id: 50,
        lock: 'a',
        grant: 1,
        token: 1n,
        kind: 'read',
        at: 50,
        aborted: false,
      },
      50,
    );
    expect(staleWrites(ledger.grants.values(), 0).counts).toEqual({ accepted: 0, refused: 1 });
  });
});

describe('writerPreference', () => {
  const writer = grant({ pid: 1, token: 10n, kind: 'write', requestedAt: 100, acquiredAt: 900 });

  it('a reader that asked while a writer waited and got in first is a violation', () => {
    const reader = grant({ pid: 2, token: 9n, kind: 'read', requestedAt: 500, acquiredAt: 600 });
    const { counts, violations } = writerPreference([writer, reader], [], 0);
    expect(counts).toEqual({ readersHeldBack: 0, readersAhead: 1 });
    expect(violations.map((violation) => violation.kind)).toEqual(['writer-preference']);
  });

  it('a reader held back until after the writer counts as held back', () => {
    const reader = grant({ pid: 2, token: 11n, kind: 'read', requestedAt: 500, acquiredAt: 905 });
    expect(writerPreference([writer, reader], [], 0).counts).toEqual({
      readersHeldBack: 1,
      readersAhead: 0,
    });
  });

  it('leaves out a writer whose wait saw a fault, and readers that asked right after it', () => {
    const reader = grant({ pid: 2, token: 9n, kind: 'read', requestedAt: 500, acquiredAt: 600 });
    const pause = fault({ kind: 'pause-server', startedAt: 200, clearedAt: 400 });
    expect(writerPreference([writer, reader], [pause], 0).violations).toEqual([]);
    const close = grant({ pid: 2, token: 9n, kind: 'read', requestedAt: 150, acquiredAt: 600 });
    expect(writerPreference([writer, close], [], 0).violations).toEqual([]);
  });
});

describe('stale writes of a semaphore', () => {
  const permit = (pid: number, token: bigint, requestedAt: number, acquiredAt: number) => {
    const record = grant({ pid, token, kind: 'semaphore', requestedAt, acquiredAt });
    return record;
  };
  const write = (record: ReturnType<typeof grant>, seq: number, accepted: boolean) =>
    record.writes.push({ type: 'write', at: seq, receivedAt: seq, aborted: false, accepted, seq });

  it('permits that returned later but were asked for before it was granted do not supersede it', () => {
    const first = permit(1, 5n, 90, 100);
    const side = permit(2, 4n, 80, 101);
    const other = permit(3, 6n, 95, 102);
    write(side, 1, true);
    write(other, 2, true);
    write(first, 3, true);
    expect(staleWrites([first, side, other], 0, { capacity: 2 }).counts).toEqual({
      accepted: 0,
      refused: 0,
    });
  });

  it('maxCount permits asked for after it was granted do', () => {
    const first = permit(1, 5n, 90, 100);
    const later = [permit(2, 6n, 150, 160), permit(3, 7n, 155, 165)];
    for (const [index, record] of later.entries()) write(record, index + 1, true);
    write(first, 3, true);
    const { counts, violations } = staleWrites([first, ...later], 0, { capacity: 2 });
    expect(counts).toEqual({ accepted: 1, refused: 0 });
    expect(violations.map((violation) => violation.kind)).toEqual(['stale-write-accepted']);
  });
});
