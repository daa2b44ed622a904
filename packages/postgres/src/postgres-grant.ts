import type { Grant } from '@lockkit/core/backend';
import type { LockConnection } from './lock-connection.js';

/** The semaphore slots a grant of permits holds (one per permit). */
export interface SemaphoreSlot {
  /** The semaphore's key (decimal text); slot keys are `key XOR slot`. */
  readonly key: string;
  /** The first slot (the grant's `key`). */
  readonly slot: number;
  /** Every slot it holds, one per permit (`[slot]` for one permit). */
  readonly slots: readonly number[];
  /** LISTEN/NOTIFY channel its release is announced on. */
  readonly channel: string;
}

/** A held advisory lock: the session holding it and the key it holds. */
export interface PostgresGrant extends Grant {
  readonly connection: LockConnection;
  /** The advisory key held (decimal text of the signed 64-bit key). */
  readonly key: string;
  /** Held with `_shared` (a reader). */
  readonly shared: boolean;
  readonly semaphore: SemaphoreSlot | undefined;
}
