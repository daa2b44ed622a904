import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from './app-config.js';

/** One stock report, as the leader wrote it. */
export interface StockReport {
  readonly at: string;
  /** The instance that was leader, and its term's epoch. */
  readonly owner: string;
  readonly epoch: string;
  readonly stock: Readonly<Record<string, number>>;
}

interface ReportFile {
  /** Largest epoch accepted so far. */
  lastEpoch: string;
  reports: StockReport[];
}

/**
 * The stock reports, in a JSON file shared by every instance. Appends are fenced by the
 * leader's epoch: a report from an epoch older than one already accepted is refused, so a
 * leader that lost its term (paused, cut off) cannot write after its successor.
 */
@Injectable()
export class ReportLog {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Appends `report` unless its epoch is older than the newest accepted; says which. */
  async append(report: StockReport): Promise<boolean> {
    const log = await this.read();
    if (BigInt(report.epoch) < BigInt(log.lastEpoch)) return false;
    log.lastEpoch = report.epoch;
    log.reports.push(report);
    const temporary = `${this.config.reportFile}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(log));
    await rename(temporary, this.config.reportFile);
    return true;
  }

  async read(): Promise<ReportFile> {
    try {
      return JSON.parse(await readFile(this.config.reportFile, 'utf8')) as ReportFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return { lastEpoch: '0', reports: [] };
      throw error;
    }
  }
}
