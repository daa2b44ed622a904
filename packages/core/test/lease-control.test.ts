/**
 * Per-acquire lease control in core: `leaseMs`/`autoExtend` options, `handle.extend(ms)`,
 * `handle.validUntil`, and the checks that refuse them where the hold is not a lease chosen
 * per hold. The lease backend here is a one-lock in-process server with real timers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Grant,
  type LockBackend,
  LockProvider,
  type LockRequest,
  now,
} from '../src/for-backends.js';
import {
  acquireAll,
  createMemoryLockProvider,
  InvalidArgumentError,
  type LockHandle,
  LockLostError,
  MemoryLockStore,
  withNamePrefix,
} from '../src/index.js';

interface LeaseGrant extends Grant {
  readonly id: number;
}

/** One lock whose hold ends at `expiresAt` unless extended (like a key with a TTL). */
class LeaseServer implements LockBackend<LeaseGrant> {
  readonly backend = 'lease-server';
  readonly capabilities = {
    crossProcess: false,
    handOver: false,
    leases: true,
    minLeaseMs: 50,
    weightedPermits: false,
    fifo: false,
    lostDetectionMs: 0,
    abandonedReleaseMs: 0,
    unavailableMs: 0,
  };
  readonly pollIntervalMs = 10;
  readonly defaultLeaseMs = 300;
  /** Per lock name: who holds it, until when. */
  readonly holds = new Map<string, { id: number; expiresAt: number }>();
  extendLengths: number[] = [];
  #nextId = 1;

  async tryAcquire(request: LockRequest): Promise<LeaseGrant | null> {
    const hold = this.holds.get(request.name);
    if (hold && now() < hold.expiresAt) return null;
    const durationMs = request.leaseMs ?? this.defaultLeaseMs;
    const id = this.#nextId++;
    const expiresAt = now() + durationMs;
    this.holds.set(request.name, { id, expiresAt });
    const autoExtend = request.autoExtend ?? true;
    return {
      id,
      fencingToken: BigInt(id),
      lease: { durationMs, validUntil: expiresAt, autoExtend },
    };
  }

  async release(request: LockRequest, grant: LeaseGrant): Promise<boolean> {
    const held = this.#holds(request, grant);
    if (held) this.holds.delete(request.name);
    return held;
  }

  async extend(
    request: LockRequest,
    grant: LeaseGrant,
    durationMs: number,
  ): Promise<number | false> {
    this.extendLengths.push(durationMs);
    if (!this.#holds(request, grant)) return false;
    const expiresAt = now() + durationMs;
    this.holds.set(request.name, { id: grant.id, expiresAt });
    return expiresAt;
  }

  async close(): Promise<void> {}

  #holds(request: LockRequest, grant: LeaseGrant): boolean {
    const hold = this.holds.get(request.name);
    return hold?.id === grant.id && now() < hold.expiresAt;
  }
}

const providers: LockProvider[] = [];
function leaseProvider(): { server: LeaseServer; provider: LockProvider<LeaseGrant> } {
  const server = new LeaseServer();
  const provider = new LockProvider(server);
  providers.push(provider as LockProvider);
  return { server, provider };
}
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function abortedWithin(signal: AbortSignal, ms: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

describe('per-acquire lease control', () => {
  it('leaseMs and autoExtend: false give a fixed lease that is lost when it runs out', async () => {
    const { server, provider } = leaseProvider();
    const started = Date.now();
    const handle = await provider.createLock('a').acquire({ leaseMs: 120, autoExtend: false });
    expect(handle.validUntil).toBeGreaterThan(started + 100);
    expect(handle.validUntil).toBeLessThanOrEqual(Date.now() + 120);
    const reason = await abortedWithin(handle.signal, 1000);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    expect(server.extendLengths).toEqual([]);
    expect(handle.validUntil).toBe(0);
    expect(await handle.release()).toBe(false);
  });

  it('extend(ms) moves validUntil on and sets the length of later automatic extensions', async () => {
    const { server, provider } = leaseProvider();
    const handle = await provider.createLock('b').acquire({ leaseMs: 90 });
    const before = handle.validUntil;
    expect(await handle.extend(600)).toBe(true);
    expect(handle.validUntil).toBeGreaterThan(before + 400);
    expect(server.extendLengths).toEqual([600]);
    expect(await handle.extend()).toBe(true); // the length now in force
    expect(server.extendLengths).toEqual([600, 600]);
    expect(await handle.release()).toBe(true);
    expect(await handle.extend()).toBe(false); // released: nothing to extend, no I/O
    expect(server.extendLengths).toHaveLength(2);
  });

  it('extend() on a fixed lease keeps it alive past its first end', async () => {
    const { provider } = leaseProvider();
    const handle = await provider.createLock('c').acquire({ leaseMs: 100, autoExtend: false });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await handle.extend(200)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 80)); // past the first lease's end
    expect(handle.signal.aborted).toBe(false);
    expect(await handle.release()).toBe(true);
  });

  it('bad lease options are InvalidArgumentErrors before any I/O', async () => {
    const { provider } = leaseProvider();
    const lock = provider.createLock('d');
    for (const options of [
      { leaseMs: 49 },
      { leaseMs: 1.5 },
      { leaseMs: 2 ** 31 },
      { autoExtend: 1 },
    ]) {
      await expect(lock.acquire(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    const handle = await lock.acquire();
    await expect(handle.extend(10)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(handle.extend(Number.NaN)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await handle.release()).toBe(true);
  });

  it('a session backend refuses the lease options and extend(), naming the capability', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    providers.push(provider as LockProvider);
    const lock = provider.createLock('e');
    await expect(lock.acquire({ leaseMs: 1000 })).rejects.toThrow(/capabilities\.minLeaseMs/);
    await expect(lock.tryAcquire({ autoExtend: false })).rejects.toThrow(
      /capabilities\.minLeaseMs/,
    );
    const handle = await lock.acquire();
    expect(handle.validUntil).toBe(Number.POSITIVE_INFINITY);
    await expect(handle.extend()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await handle.release()).toBe(true);
    expect(handle.validUntil).toBe(0);
  });

  it('withNamePrefix and acquireAll handles pass extend() and validUntil through', async () => {
    const { server, provider } = leaseProvider();
    const prefixed = withNamePrefix(provider, 'tenant:');
    const one = await prefixed.createLock('f').acquire({ leaseMs: 100, autoExtend: false });
    expect(one.validUntil).toBeGreaterThan(Date.now());
    expect(await one.extend(400)).toBe(true);
    expect(server.extendLengths).toEqual([400]);
    expect(server.holds.has('tenant:f')).toBe(true);
    const both = await acquireAll([provider.createLock('g'), provider.createLock('h')]);
    const [g, h] = both.handles as [LockHandle, LockHandle];
    // Read off the clock at each read: equal to within the reads' few microseconds apart.
    expect(Math.abs(both.validUntil - Math.min(g.validUntil, h.validUntil))).toBeLessThan(2);
    expect(await both.extend(500)).toBe(true);
    expect(server.extendLengths).toEqual([400, 500, 500]);
    expect(both.validUntil).toBeGreaterThan(Date.now() + 400);
    expect(await both.release()).toBe(true);
    expect(await one.release()).toBe(true);
  });
});
