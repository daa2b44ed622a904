import {
  ConflictException,
  Controller,
  Get,
  HttpCode,
  HttpException,
  HttpStatus,
  Inject,
  NotFoundException,
  Param,
  Post,
  ServiceUnavailableException,
} from '@nestjs/common';
import { BackendUnavailableError, LockTimeoutError } from 'lockkit';
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
      throw lockErrorToHttp(sku, error);
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

/**
 * What a lock error means to an HTTP client: the item is being sold to someone else right now
 * (423 Locked, try again), or the lock server cannot be reached (503). Anything else stays an
 * internal error. `isInstance` also recognises errors from another copy of lockkit.
 */
function lockErrorToHttp(sku: string, error: unknown): unknown {
  if (LockTimeoutError.isInstance(error)) {
    return new HttpException({ sold: false, sku, reason: 'busy' }, HttpStatus.LOCKED, {
      cause: error,
    });
  }
  if (BackendUnavailableError.isInstance(error)) {
    return new ServiceUnavailableException(
      { sold: false, sku, reason: 'lock server unavailable' },
      { cause: error },
    );
  }
  return error;
}
