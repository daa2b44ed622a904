import { setTimeout as pause } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { IElection, Leadership } from 'lockkit';
import { APP_CONFIG, type AppConfig } from './app-config.js';
import { ILockProvider } from './lock-provider.token.js';
import { ReportLog } from './report-log.js';
import { StockStore } from './stock-store.js';

/** What `GET /jobs/stock-report` shows about this instance. */
export interface SchedulerStatus {
  readonly owner: string;
  readonly leading: boolean;
  /** The current term's epoch, while leading. */
  readonly epoch: string | null;
  /** Reports this instance has written (accepted by the log). */
  readonly runs: number;
}

/**
 * The scheduled stock report, run by exactly one instance of the service: every instance
 * campaigns in the election "stock-report"; the elected one writes a report every
 * `REPORT_INTERVAL_MS` for as long as its term lasts, with the term's epoch on every write.
 * When it stops leading (it shuts down, or its lock is lost), another instance is elected and
 * takes over; a lost term campaigns again.
 */
@Injectable()
export class StockReportScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  readonly #logger = new Logger(StockReportScheduler.name);
  readonly #shutdown = new AbortController();
  #election: IElection | undefined;
  #leading: Promise<void> | undefined;
  #runs = 0;

  constructor(
    @Inject(ILockProvider) private readonly locks: ILockProvider,
    @Inject(StockStore) private readonly stock: StockStore,
    @Inject(ReportLog) private readonly reports: ReportLog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const election = this.locks.createElection('stock-report', {
      ...(this.config.instanceName !== undefined && { owner: this.config.instanceName }),
      recampaign: true,
    });
    this.#election = election;
    this.#leading = this.#lead(election).catch((error: unknown) => {
      this.#logger.error(`the stock report scheduler stopped: ${String(error)}`);
    });
  }

  /** Before the lock provider closes: resign (another instance takes over at once). */
  async onModuleDestroy(): Promise<void> {
    this.#shutdown.abort();
    await this.#leading;
  }

  status(): SchedulerStatus {
    const term = this.#election?.current() ?? null;
    return {
      owner: this.#election?.owner ?? '',
      leading: term !== null,
      epoch: term && String(term.epoch),
      runs: this.#runs,
    };
  }

  async #lead(election: IElection): Promise<void> {
    for await (const event of election.events({ signal: this.#shutdown.signal })) {
      if (event.type === 'lost') {
        this.#logger.log(`no longer running the stock report (${event.cause})`);
        continue;
      }
      this.#logger.log(`elected to run the stock report, epoch ${event.leadership.epoch}`);
      await this.#runWhileLeading(event.leadership);
    }
  }

  /** A report every interval until the term ends (its signal aborts the pause). */
  async #runWhileLeading(leadership: Leadership): Promise<void> {
    while (!leadership.signal.aborted) {
      try {
        await pause(this.config.reportIntervalMs, undefined, { signal: leadership.signal });
      } catch {
        return; // the term ended
      }
      try {
        if (await this.#report(leadership)) this.#runs += 1;
        else this.#logger.warn(`report of epoch ${leadership.epoch} refused: a newer leader wrote`);
      } catch (error) {
        this.#logger.error(`stock report failed: ${String(error)}`);
      }
    }
  }

  async #report(leadership: Leadership): Promise<boolean> {
    const all = await this.stock.readAll();
    const stock = Object.fromEntries(
      Object.entries(all).map(([sku, record]) => [sku, record.stock]),
    );
    return this.reports.append({
      at: new Date().toISOString(),
      owner: leadership.owner,
      epoch: String(leadership.epoch),
      stock,
    });
  }
}
