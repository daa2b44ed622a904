import type { BackendId } from './backend-ids.js';

/**
 * `default`: the provider exactly as a user gets it (the bench). `chaos`: short leases,
 * sessions and keepalives so that faults resolve in seconds (see provider-factory.ts).
 */
export type ProviderTuning = 'default' | 'chaos';

/** Everything a process needs to create a provider: plain data, sent to chaos workers. */
export interface ProviderSpec {
  readonly backend: BackendId;
  /** Server URLs: one, or the Redlock nodes. Empty for `file`. */
  readonly urls: readonly string[];
  /** The file backend's lock directory. */
  readonly directory: string;
  readonly tuning: ProviderTuning;
  /** Provider options over the defaults (a bench variant row), plain data. */
  readonly options?: ProviderVariant | undefined;
}

/** The options a bench variant row switches (each only where the backend has it). */
export interface ProviderVariant {
  readonly recordHolds?: boolean;
  readonly fencing?: 'table' | 'sequence';
  /** PostgreSQL and MySQL: sessions that carry many held locks at once. */
  readonly sharedConnections?: number;
}
