import type { GrantRecord, WriteRecord } from '../src/chaos/chaos-ledger.js';
import type { FaultWindow } from '../src/chaos/fault-kinds.js';

/** A grant record with sensible defaults: acquired at `acquiredAt`, released 5 ms later. */
export function grant(
  fields: Partial<GrantRecord> & { pid: number; token: bigint; acquiredAt: number },
): GrantRecord {
  const writes: WriteRecord[] = [];
  return {
    lock: 'a',
    grant: 1,
    kind: 'mutex',
    requestedAt: fields.acquiredAt - 1,
    liveEnd: fields.acquiredAt + 5,
    firstAbortedAt: undefined,
    exitAt: fields.acquiredAt + 5,
    lostAt: undefined,
    lostReason: undefined,
    releasedAt: fields.acquiredAt + 6,
    releaseResult: true,
    releaseError: undefined,
    writes,
    ...fields,
  };
}

/** A fault window. */
export function fault(fields: Partial<FaultWindow> & Pick<FaultWindow, 'kind'>): FaultWindow {
  return {
    description: fields.kind,
    startedAt: 0,
    clearedAt: 0,
    pids: undefined,
    recoveryBoundMs: 3000,
    ...fields,
  };
}
