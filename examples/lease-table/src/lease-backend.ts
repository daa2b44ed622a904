import { randomUUID } from 'node:crypto';
import { BackendUnavailableError, type Capabilities } from '@lockkit/core';
import {
  type Grant,
  type LeaseInfo,
  type LockBackend,
  type LockRequest,
  type ReleaseWatch,
  readableKey,
  type WaitContext,
} from '@lockkit/core/backend';
import pg from 'pg';
import type { ResolvedLeaseTableOptions } from './lease-options.js';
import { acquireSql, extendSql, releaseSql, schemaSql } from './lease-sql.js';
import { ReleaseListener } from './release-listener.js';

/** What proves a hold is ours: the row `(key, owner)`. */
export interface LeaseGrant extends Grant {
  readonly key: string;
  readonly owner: string;
  readonly lease: LeaseInfo;
}

/** The row key of a lock: core's versioned readable key (family, readable name, hash). */
export function leaseKey(namespace: string, kind: LockRequest['kind'], name: string): string {
  return readableKey(namespace, kind, name);
}

/** A writer that waits: its marker keeps new readers out until the writer is in or gives up. */
interface Waiter {
  readonly id: string;
  readonly key: string;
  /** The attempt in flight (a cleanup must run after it, or it could re-insert the marker). */
  last: Promise<unknown>;
  timer: NodeJS.Timeout | undefined;
  stop: () => void;
}

const noop = (): void => {};

/** A lockkit backend on one PostgreSQL table of leases. */
export class LeaseTableBackend implements LockBackend<LeaseGrant> {
  readonly backend = 'lease-table';
  readonly capabilities: Capabilities & { readonly unavailableMs: number };
  readonly pollIntervalMs: number;
  readonly #options: ResolvedLeaseTableOptions;
  readonly #pool: pg.Pool;
  readonly #listener: ReleaseListener;
  readonly #waiters = new WeakMap<WaitContext, Waiter>();
  readonly #live = new Set<Waiter>();
  readonly #cleanups = new Set<Promise<void>>();
  readonly #clients = new Set<pg.Client>();
  #schema: Promise<void> | undefined;

  constructor(options: ResolvedLeaseTableOptions) {
    this.#options = options;
    const { leaseMs, pollIntervalMs, queryTimeoutMs } = options;
    this.pollIntervalMs = pollIntervalMs;
    this.capabilities = Object.freeze({
      crossProcess: true,
      handOver: false, // no exportGrant/resumeGrant (docs/writing-a-backend.md, "Hand-over")
      leases: true,
      minLeaseMs: Number.POSITIVE_INFINITY, // one lease length, set on the provider
      weightedPermits: false,
      fifo: false,
      // A deleted row is noticed by the next extension: due a third of the lease after the
      // last one (core's timer may start it 10 ms late), answered within a query timeout.
      lostDetectionMs: Math.ceil(leaseMs / 3) + queryTimeoutMs + 10,
      // A dead holder's row runs out a lease after its last extension; a waiter sees it at
      // its next safety poll (+20 % jitter) and decides within a query timeout.
      abandonedReleaseMs: leaseMs + Math.ceil(pollIntervalMs * 1.2) + 2 * queryTimeoutMs,
      // Waiting for a pooled connection, then the query: each bounded by the query timeout.
      unavailableMs: 2 * queryTimeoutMs,
    });
    const config: pg.ClientConfig = {
      connectionString: options.connection,
      connectionTimeoutMillis: queryTimeoutMs,
      query_timeout: queryTimeoutMs,
    };
    this.#pool = new pg.Pool({ ...config, max: options.poolSize });
    this.#pool.on('error', noop); // an idle connection that drops; the next query reconnects
    this.#pool.on('connect', (client) => this.#clients.add(client));
    this.#pool.on('remove', (client) => this.#clients.delete(client));
    this.#listener = new ReleaseListener(config, (cause) => this.#unavailable(cause));
  }

  async tryAcquire(request: LockRequest, wait: WaitContext): Promise<LeaseGrant | null> {
    const key = leaseKey(request.namespace, request.kind, request.name);
    const owner = randomUUID();
    const { leaseMs, pollIntervalMs, queryTimeoutMs } = this.#options;
    // Only a writer that will wait leaves a marker; a single try (-Infinity) never does.
    const waiter =
      request.kind === 'write' && wait.deadline !== Number.NEGATIVE_INFINITY
        ? this.#waiterOf(wait, key)
        : undefined;
    const max = request.kind === 'read' ? 0 : request.kind === 'semaphore' ? request.maxCount : 1;
    const started = performance.now();
    const attempt = this.#query(acquireSql, [
      key,
      owner,
      request.kind,
      max,
      leaseMs,
      waiter?.id ?? null,
      // The marker outlives the gap between two attempts, but never the writer's deadline.
      waiter
        ? Math.ceil(Math.min(3 * pollIntervalMs + 2 * queryTimeoutMs, wait.deadline - started))
        : 0,
    ]);
    if (waiter) waiter.last = attempt.then(noop, noop);
    let token: string | null | undefined;
    try {
      token = (await attempt)[0]?.['token'] as string | null | undefined;
    } catch (error) {
      if (waiter) {
        // Core may retry through an outage: the next attempt starts a fresh waiter.
        this.#waiters.delete(wait);
        this.#finish(waiter, true);
      }
      throw error;
    }
    if (token == null) return null;
    if (waiter) this.#finish(waiter, false); // the function removed the marker
    const lease = { durationMs: leaseMs, validUntil: started + leaseMs, autoExtend: true };
    return { key, owner, fencingToken: BigInt(token), lease };
  }

  watch(request: LockRequest): Promise<ReleaseWatch> {
    return this.#listener.watch(leaseKey(request.namespace, request.kind, request.name));
  }

  async release(_request: LockRequest, grant: LeaseGrant): Promise<boolean> {
    const rows = await this.#query(releaseSql, [grant.key, grant.owner]);
    return rows[0]?.['live'] === true;
  }

  async extend(_request: LockRequest, grant: LeaseGrant): Promise<number | false> {
    const validUntil = performance.now() + this.#options.leaseMs;
    const rows = await this.#query(extendSql, [grant.key, grant.owner, this.#options.leaseMs]);
    return rows.length > 0 ? validUntil : false;
  }

  async close(): Promise<void> {
    for (const waiter of [...this.#live]) this.#finish(waiter, true);
    await Promise.all(this.#cleanups);
    // A graceful end waits for the server to close the socket, which a hung server never
    // does: after a query timeout, the sockets are destroyed.
    const ended = Promise.all([this.#listener.close(), this.#pool.end().catch(noop)]);
    const timer = setTimeout(() => {
      for (const client of this.#clients) client.connection.stream.destroy();
      this.#listener.destroy();
    }, this.#options.queryTimeoutMs);
    await ended;
    clearTimeout(timer);
  }

  /**
   * The waiting state of one acquire: core passes the same WaitContext to each of its
   * attempts. It ends when the signal aborts (caller's abort, close, a deadline that cut an
   * attempt short) or at the deadline (core's loop may end a wait there without aborting).
   */
  #waiterOf(wait: WaitContext, key: string): Waiter | undefined {
    const known = this.#waiters.get(wait);
    if (known) return this.#live.has(known) ? known : undefined; // ended: leave no marker
    const signal = wait.signal;
    const onAbort = (): void => this.#finish(waiter, true);
    const waiter: Waiter = {
      id: `waiting:${randomUUID()}`,
      key,
      last: Promise.resolve(),
      timer: undefined,
      stop: () => signal.removeEventListener('abort', onAbort),
    };
    this.#waiters.set(wait, waiter);
    this.#live.add(waiter);
    signal.addEventListener('abort', onAbort, { once: true });
    if (Number.isFinite(wait.deadline)) {
      waiter.timer = setTimeout(onAbort, Math.max(0, wait.deadline - performance.now()));
      waiter.timer.unref();
    }
    if (signal.aborted) onAbort();
    return this.#live.has(waiter) ? waiter : undefined;
  }

  /** Ends a waiter; with `removeMarker`, deletes its row once its last attempt settled. */
  #finish(waiter: Waiter, removeMarker: boolean): void {
    if (!this.#live.delete(waiter)) return;
    clearTimeout(waiter.timer);
    waiter.stop();
    if (!removeMarker) return;
    const cleanup = waiter.last
      .then(() => this.#query(releaseSql, [waiter.key, waiter.id]))
      .then(noop, noop); // unreachable: the marker runs out by itself
    this.#cleanups.add(cleanup);
    void cleanup.then(() => this.#cleanups.delete(cleanup));
  }

  async #query(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
    this.#schema ??= this.#pool.query(schemaSql).then(noop, (error: unknown) => {
      this.#schema = undefined;
      throw this.#unavailable(error);
    });
    await this.#schema;
    try {
      return (await this.#pool.query(sql, params as unknown[])).rows as Record<string, unknown>[];
    } catch (error) {
      throw this.#unavailable(error);
    }
  }

  #unavailable(cause: unknown): BackendUnavailableError {
    const why = cause instanceof Error ? cause.message : String(cause);
    return new BackendUnavailableError(
      `lease-table: PostgreSQL at ${this.#options.address} failed: ${why}`,
      { cause },
    );
  }
}
