import { Controller, Get, Inject } from '@nestjs/common';
import { type SchedulerStatus, StockReportScheduler } from './stock-report.scheduler.js';

/** `GET /jobs/stock-report`: whether this instance runs the scheduled report now. */
@Controller('jobs')
export class StockReportController {
  constructor(@Inject(StockReportScheduler) private readonly scheduler: StockReportScheduler) {}

  @Get('stock-report')
  status(): SchedulerStatus {
    return this.scheduler.status();
  }
}
