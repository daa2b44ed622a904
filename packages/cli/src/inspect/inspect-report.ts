/** One session or process that holds (or waits for) a lock. */
export interface Holder {
  /** `holder`, `reader`, `writer`, `permit` or `waiting`. */
  readonly role: string;
  /** One line for people, e.g. `pid 4242 on this host (running), heartbeat 0.4 s ago`. */
  readonly summary: string;
  /** The same facts, for `--json`. */
  readonly details: Readonly<Record<string, string | number | boolean | null>>;
}

/** What `lockkit inspect` found out. */
export interface InspectReport {
  readonly backend: string;
  /** e.g. `lock "orders"`, `read-write lock "catalog"`. */
  readonly lock: string;
  /** Whether the backend can tell who holds a lock at all. */
  readonly canTell: boolean;
  /** Why it cannot (when `canTell` is false). */
  readonly reason?: string;
  readonly holders: readonly Holder[];
  readonly waiters: readonly Holder[];
  /** The last fencing token handed out for this lock, where the backend keeps one per lock. */
  readonly lastFencingToken?: string;
  /** Anything else worth knowing (stale holders, limits of what was read). */
  readonly notes: readonly string[];
}

/** The report's lines for people. */
export function formatReport(report: InspectReport, shownUrl: string): string[] {
  const lines = [`${report.lock} on ${shownUrl} (${report.backend} backend)`];
  if (!report.canTell) {
    lines.push(`  cannot tell who holds it: ${report.reason ?? 'not supported'}`);
    return lines;
  }
  lines[0] += report.holders.length === 0 ? ': free' : ': held';
  for (const holder of report.holders) lines.push(`  ${holder.role.padEnd(8)} ${holder.summary}`);
  for (const waiter of report.waiters) lines.push(`  ${waiter.role.padEnd(8)} ${waiter.summary}`);
  if (report.lastFencingToken !== undefined) {
    lines.push(`  last fencing token: ${report.lastFencingToken}`);
  }
  for (const note of report.notes) lines.push(`  note: ${note}`);
  return lines;
}
