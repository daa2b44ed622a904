import type { Grant } from '@lockkit/core/backend';
import type { LockConnection } from './lock-connection.js';

/** The semaphore slot a permit holds. */
export interface SemaphoreSlot {
  /** The semaphore's key (decimal text); slot keys are `key XOR slot`. */
  readonly key: string;
  readonly slot: number;
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
