import type { GrantRecord } from './chaos-ledger.js';
import type { StaleWrites, Violation } from './chaos-result.js';
import { excludesAll, exclusive, type Sharing } from './sharing.js';
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
 *
 * An RW lock's reader is superseded by a later writer only (readers share); a semaphore's
 * permit by `capacity` permits asked for after it was granted (permits held side by side
 * return in any order, so a later return does not make a later grant).
 */
export function staleWrites(
  grants: Iterable<GrantRecord>,
  origin: number,
  sharing: Sharing = exclusive,
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
    // Grants with an accepted write, newest (by acquisition) first: all / excluding everyone.
    const newest: GrantRecord[] = [];
    const newestExclusive: GrantRecord[] = [];
    for (const write of writes) {
      const { grant } = write;
      const permits = grant.kind === 'semaphore';
      const rivals =
        excludesAll(grant.kind) || grant.kind === 'semaphore' ? newest : newestExclusive;
      const superseding = rivals.filter(
        (other) => other !== grant && grantedAfter(other, grant, permits),
      );
      const stale = superseding.length >= sharing.capacity;
      if (stale && write.accepted) {
        accepted += 1;
        violations.push({
          kind: 'stale-write-accepted',
          detail: `${lock}: the fence accepted a write of ${describeGrant(grant, origin)} after it had accepted one of the later ${describeGrant(superseding[0]!, origin)}`,
        });
      } else if (stale) {
        refused += 1;
      }
      if (!write.accepted) continue;
      remember(newest, grant, sharing.capacity + 1);
      if (excludesAll(grant.kind)) remember(newestExclusive, grant, 2);
    }
  }
  return { counts: { accepted, refused }, violations };
}

/**
 * Whether `other` was granted after `grant`: it returned after `grant` did (a permit: it was
 * asked for after `grant` returned). When both acquire calls were in flight together, by
 * token instead: two replies in flight may come back in either order (a process whose wall
 * clock is off takes a fresh file lock over at once, so this happens), and the token is the
 * server's order. A lower token asked for after `grant` returned still counts as later.
 */
function grantedAfter(other: GrantRecord, grant: GrantRecord, permits: boolean): boolean {
  if (permits) return other.requestedAt > grant.acquiredAt;
  const together = other.requestedAt < grant.acquiredAt && grant.requestedAt < other.acquiredAt;
  return together ? other.token > grant.token : other.acquiredAt > grant.acquiredAt;
}

/** Keeps `grant` among the `size` newest distinct grants of `list` (newest first). */
function remember(list: GrantRecord[], grant: GrantRecord, size: number): void {
  if (list.includes(grant)) return;
  list.push(grant);
  list.sort((a, b) => b.acquiredAt - a.acquiredAt);
  list.length = Math.min(list.length, size);
}
