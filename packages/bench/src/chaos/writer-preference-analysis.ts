import type { GrantRecord } from './chaos-ledger.js';
import type { Violation, WriterPreference } from './chaos-result.js';
import type { FaultWindow } from './fault-kinds.js';
import { describeGrant } from './token-analysis.js';

/**
 * How long after a writer asked a reader must have asked before the writer certainly
 * waited at the server first (its request in flight, an event loop busy under load).
 */
export const writerHeadStartMs = 250;

/**
 * RW locks prefer a waiting writer: a reader that asks while a writer waits is granted only
 * after that writer. For every writer's grant, the readers of the same lock that called
 * `acquireRead()` more than {@link writerHeadStartMs} after it called `acquireWrite()` and
 * before it was granted must have been granted after it. Writers whose wait saw a fault
 * (any server fault, or a fault on the writer's own process) are left out: a writer whose
 * queue entry died with its session or whose process was frozen is no longer waiting.
 */
export function writerPreference(
  grants: Iterable<GrantRecord>,
  faults: readonly FaultWindow[],
  origin: number,
): { readonly counts: WriterPreference; readonly violations: Violation[] } {
  const readers = new Map<string, GrantRecord[]>();
  const writers: GrantRecord[] = [];
  for (const grant of grants) {
    if (Number.isNaN(grant.acquiredAt)) continue;
    if (grant.kind === 'write') writers.push(grant);
    if (grant.kind !== 'read') continue;
    const list = readers.get(grant.lock) ?? [];
    list.push(grant);
    readers.set(grant.lock, list);
  }
  let readersHeldBack = 0;
  let readersAhead = 0;
  const violations: Violation[] = [];
  for (const writer of writers) {
    const disturbed = faults.some(
      (fault) =>
        (fault.pids === undefined || fault.pids.includes(writer.pid)) &&
        fault.startedAt < writer.acquiredAt &&
        fault.clearedAt + writerHeadStartMs > writer.requestedAt,
    );
    if (disturbed) continue;
    for (const reader of readers.get(writer.lock) ?? []) {
      if (reader.requestedAt <= writer.requestedAt + writerHeadStartMs) continue;
      if (reader.requestedAt >= writer.acquiredAt) continue;
      if (reader.acquiredAt > writer.acquiredAt) {
        readersHeldBack += 1;
        continue;
      }
      readersAhead += 1;
      violations.push({
        kind: 'writer-preference',
        detail: `${writer.lock}: reader ${describeGrant(reader, origin)} asked ${Math.round(reader.requestedAt - writer.requestedAt)} ms after writer ${describeGrant(writer, origin)} had asked, and was granted ${Math.round(writer.acquiredAt - reader.acquiredAt)} ms before it`,
      });
    }
  }
  return { counts: { readersHeldBack, readersAhead }, violations };
}
