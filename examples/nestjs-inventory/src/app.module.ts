import { Module } from '@nestjs/common';
import { ConfigModule } from './config.module.js';
import { InventoryController } from './inventory.controller.js';
import { InventoryService } from './inventory.service.js';
import { LockModule } from './lock.module.js';
import { ReportLog } from './report-log.js';
import { StockReportController } from './stock-report.controller.js';
import { StockReportScheduler } from './stock-report.scheduler.js';
import { StockStore } from './stock-store.js';

/**
 * The inventory service: configuration, the lock provider, the shop itself, and the stock
 * report that runs on the elected instance only.
 */
@Module({
  imports: [ConfigModule, LockModule],
  controllers: [InventoryController, StockReportController],
  providers: [InventoryService, StockStore, ReportLog, StockReportScheduler],
})
export class AppModule {}
