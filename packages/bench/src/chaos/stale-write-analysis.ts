import type { GrantRecord } from './chaos-ledger.js';
import type { StaleWrites, Violation } from './chaos-result.js';
import { describeGrant } from './token-analysis.js';

/**
 * Writes from a stale epoch, per lock (or election). A grant is *superseded at the fence*
 * once the fence has accepted a write of a grant that was acquired after it (by the time its
 * holder stated `acquire()`/`campaign()` returned). Every grant writes first thing after it is
 * granted (its claim), so from then on a correct fence with correct epochs refuses every write
 * of the older grant: its epoch is smaller. A write it still accepts means the epochs do not
 * follow the order of the grants (a repeated or backward token) — the stale leader's late work
 * got through. Writes that arrive before the newer grant's claim are not stale here: they
 * are ordered before every write of the newer grant.
 */
export function staleWrites(
  grants: Iterable<GrantRecord>,
  origin: number,
): { readonly counts: StaleWrites; readonly violations: Violation[] } {
  const byLock = new Map<string, { grant: GrantRecord; seq: number; accepted: boolean }[]>();
  for (const grant of grants) {
    if (Number.isNaN(grant.acquiredAt)) continue;
    const list = byLock.get(grant.lock) ?? [];
    for (const write of grant.writes)
      list.push({ grant, seq: write.seq, accepted: write.accepted });
    byLock.set(grant.lock, list);
  }
  let accepted = 0;
  let refused = 0;
  const violations: Violation[] = [];
  for (const [lock, writes] of byLock) {
    writes.sort((a, b) => a.seq - b.seq);
    let newest: GrantRecord | undefined;
    for (const write of writes) {
      const stale = newest !== undefined && write.grant.acquiredAt < newest.acquiredAt;
      if (stale && write.accepted) {
        accepted += 1;
        violations.push({
          kind: 'stale-write-accepted',
          detail: `${lock}: the fence accepted a write of ${describeGrant(write.grant, origin)} after it had accepted one of the later ${describeGrant(newest!, origin)}`,
        });
      } else if (stale) {
        refused += 1;
      }
      if (write.accepted && (!newest || write.grant.acquiredAt > newest.acquiredAt)) {
        newest = write.grant;
      }
    }
  }
  return { counts: { accepted, refused }, violations };
}
