import type { LockHolder, LockState } from 'lockkit';
import type { LockTarget } from '../invocation.js';

/** How the lock is named in the report, e.g. `semaphore "exports" (4 permits)`. */
export function describeTarget(name: string, target: LockTarget): string {
  const quoted = JSON.stringify(name);
  if (target.kind === 'mutex') return `lock ${quoted}`;
  if (target.kind === 'semaphore') return `semaphore ${quoted} (${target.maxCount} permits)`;
  return `read-write lock ${quoted}`;
}

/** The report's lines for people; `now` is `Date.now()` when it was read. */
export function formatState(state: LockState, lock: string, where: string, now: number): string[] {
  let status = state.held ? 'held' : 'free';
  if (state.permitsFree !== undefined) status += `, ${state.permitsFree} free`;
  const lines = [`${lock} on ${where}: ${status}`];
  for (const holder of state.holders) lines.push(`  ${holderLine(holder, now)}`);
  lines.push(
    state.waiting === undefined
      ? '  waiting: unknown (this backend does not register waiters on the server)'
      : `  waiting: ${state.waiting}`,
  );
  return lines;
}

/** The report as JSON (fencing tokens as decimal strings, times as ISO strings). */
export function stateJson(state: LockState, lock: string, url: string, backend: string): string {
  return JSON.stringify(
    {
      url,
      backend,
      lock,
      ...state,
      holders: state.holders.map((holder) => ({
        ...holder,
        fencingToken: holder.fencingToken?.toString() ?? null,
        owner: holder.owner ?? null,
        since: holder.since === undefined ? null : new Date(holder.since).toISOString(),
        validUntil: Number.isFinite(holder.validUntil)
          ? new Date(holder.validUntil).toISOString()
          : null,
      })),
      waiting: state.waiting ?? null,
      permitsFree: state.permitsFree ?? null,
    },
    null,
    2,
  );
}

function holderLine(holder: LockHolder, now: number): string {
  const parts = [holder.kind === 'semaphore' ? 'permit' : holder.kind];
  if (holder.permits !== 1) parts.push(`×${holder.permits}`);
  parts.push(`token ${holder.fencingToken ?? 'unknown'}`);
  parts.push(
    holder.owner === undefined ? 'owner unknown' : `owner ${JSON.stringify(holder.owner)}`,
  );
  if (holder.since !== undefined) {
    parts.push(
      `since ${new Date(holder.since).toISOString()} (${seconds(now - holder.since)} ago)`,
    );
  }
  if (Number.isFinite(holder.validUntil)) {
    parts.push(`lease ends in ${seconds(holder.validUntil - now)}`);
  }
  return parts.join('  ');
}

function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}
