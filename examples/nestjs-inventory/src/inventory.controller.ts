import {
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  ServiceUnavailableException,
} from '@nestjs/common';
import { LockTimeoutError } from 'lockkit';
import { InventoryService, type Purchase } from './inventory.service.js';

/** `POST /inventory/:sku/purchase` buys one; `GET /inventory/:sku` shows the stock. */
@Controller('inventory')
export class InventoryController {
  constructor(@Inject(InventoryService) private readonly inventory: InventoryService) {}

  @Post(':sku/purchase')
  @HttpCode(200)
  async purchase(@Param('sku') sku: string): Promise<Purchase> {
    let purchase: Purchase;
    try {
      purchase = await this.inventory.purchase(sku);
    } catch (error) {
      if (LockTimeoutError.isInstance(error)) {
        throw new ServiceUnavailableException('the inventory is busy, try again');
      }
      throw error;
    }
    if (purchase.sold) return purchase;
    if (purchase.reason === 'unknown sku') throw new NotFoundException(purchase);
    throw new ConflictException(purchase);
  }

  @Get(':sku')
  async stock(@Param('sku') sku: string): Promise<{ sku: string; stock: number; sold: number }> {
    const stock = await this.inventory.stock(sku);
    if (!stock) throw new NotFoundException({ sku, reason: 'unknown sku' });
    return stock;
  }
}
