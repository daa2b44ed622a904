import { Module } from '@nestjs/common';
import { ConfigModule } from './config.module.js';
import { InventoryController } from './inventory.controller.js';
import { InventoryService } from './inventory.service.js';
import { LockModule } from './lock.module.js';
import { StockStore } from './stock-store.js';

/** The inventory service: configuration, the lock provider, and the shop itself. */
@Module({
  imports: [ConfigModule, LockModule],
  controllers: [InventoryController],
  providers: [InventoryService, StockStore],
})
export class AppModule {}
