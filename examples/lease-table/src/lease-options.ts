import { InvalidArgumentError } from '@lockkit/core';
import { checkOptionKeys, numberOption, stringOption } from '@lockkit/core/backend';

/** Options of {@link createLeaseTableLockProvider}. */
export interface LeaseTableOptions {
  /** `postgres://user@host:port/database`. Required. */
  readonly connection: string;
  /**
   * Isolates applications sharing a database.
   * @defaultValue ''
   */
  readonly namespace?: string | undefined;
  /**
   * Lease length. A holder that dies frees its lock after at most this long; a live holder
   * extends it every third of it.
   * @defaultValue 10000
   */
  readonly leaseMs?: number | undefined;
  /**
   * Safety poll of a waiting acquire (a lease that runs out sends no notification).
   * @defaultValue 500
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * Bound on connecting and on each query; a server that does not answer within it is
   * reported as `BackendUnavailableError`.
   * @defaultValue 2000
   */
  readonly queryTimeoutMs?: number | undefined;
  /**
   * Most pooled connections.
   * @defaultValue 10
   */
  readonly poolSize?: number | undefined;
}

/** Validated options with defaults applied. */
export interface ResolvedLeaseTableOptions {
  readonly connection: string;
  readonly namespace: string;
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
  readonly queryTimeoutMs: number;
  readonly poolSize: number;
  /** `host:port` from the URL, for error messages. */
  readonly address: string;
}

const known = [
  'connection',
  'namespace',
  'leaseMs',
  'pollIntervalMs',
  'queryTimeoutMs',
  'poolSize',
] as const;

/** Checks every option before any I/O (`InvalidArgumentError` naming the option). */
export function resolveOptions(options: LeaseTableOptions): ResolvedLeaseTableOptions {
  checkOptionKeys(options, known, 'lease-table');
  const connection = stringOption('connection', options.connection, '');
  let url: URL;
  try {
    url = new URL(connection);
  } catch {
    throw new InvalidArgumentError('connection must be a postgres:// URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new InvalidArgumentError(`connection must be a postgres:// URL, got ${url.protocol}`);
  }
  const leaseMs = numberOption('leaseMs', options.leaseMs, { default: 10_000, min: 300 });
  return Object.freeze({
    connection,
    namespace: stringOption('namespace', options.namespace, ''),
    leaseMs,
    pollIntervalMs: numberOption('pollIntervalMs', options.pollIntervalMs, {
      default: 500,
      min: 10,
    }),
    queryTimeoutMs: numberOption('queryTimeoutMs', options.queryTimeoutMs, {
      default: 2000,
      min: 50,
      max: Math.floor(leaseMs / 3),
    }),
    poolSize: numberOption('poolSize', options.poolSize, { default: 10, min: 1, max: 1000 }),
    address: `${url.hostname || 'localhost'}:${url.port || '5432'}`,
  });
}
