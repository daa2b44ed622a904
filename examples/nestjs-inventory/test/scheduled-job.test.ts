import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { StockReport } from '../src/report-log.js';
import type { SchedulerStatus } from '../src/stock-report.scheduler.js';
import { ServiceInstance } from './service-instance.js';

// The scheduled stock report runs on exactly one of two instances, elected through the lock
// backend that LOCK_URL names; when that instance stops, the other one takes over with a
// larger epoch.

const scratch = mkdtempSync(join(tmpdir(), 'lockkit-nest-job-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function reportsIn(file: string): StockReport[] {
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, 'utf8')) as { reports: StockReport[] }).reports;
}

async function statusOf(base: string): Promise<SchedulerStatus> {
  return (await (await fetch(`${base}/jobs/stock-report`)).json()) as SchedulerStatus;
}

/** Resolves once `condition()` holds (checked every 20 ms); fails after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await pause(20);
  }
}

/** Two instances named a and b, reporting every 50 ms, on `lockUrl`. */
async function twoInstances(label: string, lockUrl: string) {
  const stockFile = join(scratch, `${label}-stock.json`);
  const reportFile = join(scratch, `${label}-reports.json`);
  writeFileSync(stockFile, JSON.stringify({ widget: { stock: 7, lastToken: '0', sales: [] } }));
  const env = (name: string) => ({
    LOCK_URL: lockUrl,
    STOCK_FILE: stockFile,
    REPORT_FILE: reportFile,
    REPORT_INTERVAL_MS: '50',
    INSTANCE_NAME: name,
  });
  const instances = await Promise.all([
    ServiceInstance.start(env('a')),
    ServiceInstance.start(env('b')),
  ]);
  return { instances, reports: () => reportsIn(reportFile) };
}

const backends: readonly (readonly [string, () => string])[] = [
  ['file', () => pathToFileURL(join(scratch, 'locks')).href],
  [
    'postgres',
    () => {
      const url = inject('lockkitServers').postgresUrl;
      if (!url) throw new Error('the global setup started no PostgreSQL');
      return url;
    },
  ],
];

describe('the scheduled stock report', () => {
  it.each(backends)(
    '%s: runs on exactly one of two instances; the other takes over when it stops',
    async (label, lockUrl) => {
      const { instances, reports } = await twoInstances(label, lockUrl());
      const running = new Set(instances.map(([instance]) => instance));
      try {
        await until(() => reports().length >= 5, 10_000, 'five reports');
        const statuses = await Promise.all(instances.map(([, base]) => statusOf(base)));
        const leaders = statuses.filter((status) => status.leading);
        expect(leaders).toHaveLength(1);
        const leader = leaders[0]!;
        const before = reports();
        expect(new Set(before.map((report) => report.owner))).toEqual(new Set([leader.owner]));
        expect(new Set(before.map((report) => report.epoch))).toEqual(new Set([leader.epoch]));
        expect(before[0]!.stock).toEqual({ widget: 7 });

        // The leader shuts down (SIGTERM: it resigns); the other instance is elected.
        const leaderIndex = statuses.indexOf(leader);
        const [stopped] = instances[leaderIndex]!;
        const [successor, successorBase] = instances[1 - leaderIndex]!;
        await stopped.stop();
        running.delete(stopped);
        const other = statuses[1 - leaderIndex]!.owner;
        await until(
          () => reports().some((report) => report.owner === other),
          10_000,
          `a report from ${other}`,
        );
        const after = reports();
        const firstOfOther = after.findIndex((report) => report.owner === other);
        // One leader at a time: once the successor wrote, the old leader never did again.
        expect(after.slice(0, firstOfOther).every((report) => report.owner === leader.owner)).toBe(
          true,
        );
        expect(after.slice(firstOfOther).every((report) => report.owner === other)).toBe(true);
        expect(BigInt(after[firstOfOther]!.epoch)).toBeGreaterThan(BigInt(leader.epoch ?? 0));
        expect(await statusOf(successorBase)).toMatchObject({ owner: other, leading: true });
        await successor.stop();
        running.delete(successor);
      } finally {
        await Promise.all([...running].map((instance) => instance.stop()));
      }
    },
  );

  it('the check catches an election that does not span processes (memory: is per process)', async () => {
    const { instances, reports } = await twoInstances('memory', 'memory:');
    try {
      await until(
        () => new Set(reports().map((report) => report.owner)).size === 2,
        10_000,
        'reports from both instances',
      );
      const statuses = await Promise.all(instances.map(([, base]) => statusOf(base)));
      // Each process elects itself: two leaders, both writing reports.
      expect(statuses.map((status) => status.leading)).toEqual([true, true]);
    } finally {
      await Promise.all(instances.map(([instance]) => instance.stop()));
    }
  });
});
