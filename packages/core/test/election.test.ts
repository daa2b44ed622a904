/**
 * Leader election, built in core on the mutex: the policy (terms, signal order, resign,
 * events, re-campaign, close) on core's in-process memory provider. The conformance suite
 * checks the same on every backend.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { leadershipHandle } from '../src/for-backends.js';
import {
  createMemoryLockProvider,
  type ElectionEvent,
  InvalidArgumentError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  MemoryLockStore,
  ProviderClosedError,
  withNamePrefix,
} from '../src/index.js';

function world() {
  const store = new MemoryLockStore();
  return () => createMemoryLockProvider({ store });
}

/** The next value of `events`, failing the test if it does not come. */
async function next(events: AsyncIterator<ElectionEvent>): Promise<ElectionEvent> {
  const result = await events.next();
  if (result.done) throw new Error('the iteration ended');
  return result.value;
}

describe('election', () => {
  it('one participant leads; resign hands over to the waiting one with a larger epoch', async () => {
    const provider = world();
    const a = provider().createElection('jobs', { owner: 'a' });
    const b = provider().createElection('jobs', { owner: 'b' });
    const first = await a.campaign();
    expect(first.owner).toBe('a');
    expect(a.current()).toBe(first);
    expect(await b.campaign({ timeout: 0 }).catch((error: unknown) => error)).toBeInstanceOf(
      LockTimeoutError,
    );
    const waiting = b.campaign();
    await first.resign();
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    expect(String(first.signal.reason)).toMatch(/resigned/);
    expect(a.current()).toBeNull();
    const second = await waiting;
    expect(second.epoch).toBeGreaterThan(first.epoch);
    expect(b.current()).toBe(second);
    await first.resign(); // idempotent, and does not touch b's term
    expect(second.signal.aborted).toBe(false);
    await second.resign();
  });

  it("a term's signal aborts before its lock is released", async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const election = provider.createElection('order');
    const term = await election.campaign();
    let heldWhenAborted: number | undefined;
    term.signal.addEventListener('abort', () => {
      heldWhenAborted = provider.heldCount;
    });
    await term.resign();
    expect(heldWhenAborted).toBe(1);
    expect(provider.heldCount).toBe(0);
  });

  it('a lost lock ends the term with the lock’s own LockLostError', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const election = provider.createElection('lost');
    const term = await election.campaign();
    const handle = leadershipHandle(term);
    expect(handle.fencingToken).toBe(term.epoch);
    provider.loseLock(handle);
    expect(term.signal.aborted).toBe(true);
    expect(term.signal.reason).toBe(handle.signal.reason);
    expect(term.signal.reason).toBeInstanceOf(LockLostError);
    expect(election.current()).toBeNull();
    expect(await election.leader()).toBeNull();
    const next = await election.campaign({ timeout: 1000 });
    expect(next.epoch).toBeGreaterThan(term.epoch);
    await next.resign();
    expect(provider.heldCount).toBe(0);
  });

  it('leader() names the live term of any participant of the same provider', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const mine = provider.createElection('who', { owner: 'worker-1' });
    const other = provider.createElection('who');
    expect(other.owner).toBe(`${hostname()}:${process.pid}`);
    expect(await other.leader()).toBeNull();
    const term = await mine.campaign();
    expect(await other.leader()).toEqual({ owner: 'worker-1', epoch: term.epoch });
    expect(other.current()).toBeNull();
    // Another provider (another process, as far as it can tell) does not know.
    const elsewhere = createMemoryLockProvider({ store: provider.store });
    expect(await elsewhere.createElection('who').leader()).toBeNull();
    await term.resign();
    expect(await other.leader()).toBeNull();
  });

  it('await using resigns; elections and locks of the same name are different locks', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const election = provider.createElection('name');
    const lock = await provider.createLock('name').acquire();
    {
      await using term = await election.campaign({ timeout: 0 });
      expect(term.signal.aborted).toBe(false);
      // The election runs on the mutex "election:name".
      expect(await provider.createLock('election:name').tryAcquire()).toBeNull();
    }
    expect(election.current()).toBeNull();
    expect(provider.heldCount).toBe(1);
    await lock.release();
  });

  it('close() ends terms (signal first), withdraws campaigns and refuses new ones', async () => {
    const store = new MemoryLockStore();
    const provider = createMemoryLockProvider({ store });
    const leader = provider.createElection('close');
    const term = await leader.campaign();
    const waiting = provider.createElection('close').campaign();
    let heldWhenAborted: number | undefined;
    term.signal.addEventListener('abort', () => {
      heldWhenAborted = provider.heldCount;
    });
    await provider.close();
    expect(heldWhenAborted).toBe(1);
    expect(term.signal.reason).toBeInstanceOf(LockLostError);
    expect(String(term.signal.reason)).toMatch(/provider was closed/);
    expect(await waiting.catch((error: unknown) => error)).toBeInstanceOf(LockAbortedError);
    expect(await leader.campaign().catch((error: unknown) => error)).toBeInstanceOf(
      ProviderClosedError,
    );
    expect(() => provider.createElection('close')).toThrow(ProviderClosedError);
    // The lock is free for others.
    const other = createMemoryLockProvider({ store }).createElection('close');
    await (await other.campaign({ timeout: 0 })).resign();
  });

  it('checks its options before any I/O', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const bad = [
      () => provider.createElection(42 as unknown as string),
      () => provider.createElection('x', { owner: 7 as unknown as string }),
      () => provider.createElection('x', { recampaign: 'yes' as unknown as boolean }),
      () => provider.createElection('x', { leaseMs: 5 } as never),
      () => provider.createElection('x', null as never),
      () => provider.createElection('x').events({ timeout: 5 } as never),
      () => provider.createElection('x').events({ signal: 'no' } as never),
    ];
    for (const call of bad) expect(call).toThrow(InvalidArgumentError);
    const election = provider.createElection('x');
    for (const options of [{ timeoutMs: 5 }, { timeout: -1 }, { signal: {} }]) {
      const error = await election.campaign(options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
    }
    expect(provider.heldCount).toBe(0);
    const aborted = AbortSignal.abort(new Error('mine'));
    expect(await election.campaign({ signal: aborted }).catch((e: unknown) => e)).toBe(
      aborted.reason,
    );
  });
});

describe('election events()', () => {
  it('yields elected then lost; re-campaigns after a lost lock when asked to', async () => {
    const store = new MemoryLockStore();
    const provider = createMemoryLockProvider({ store });
    const events = provider.createElection('loop', { recampaign: true }).events();
    const elected = await next(events);
    expect(elected.type).toBe('elected');
    provider.loseLock(leadershipHandle(elected.leadership));
    const lost = await next(events);
    expect(lost).toMatchObject({
      type: 'lost',
      cause: 'lock-lost',
      leadership: elected.leadership,
    });
    if (lost.type === 'lost') expect(lost.reason).toBeInstanceOf(LockLostError);
    const again = await next(events);
    expect(again.type).toBe('elected');
    expect(again.leadership.epoch).toBeGreaterThan(elected.leadership.epoch);
    // Leaving the loop resigns the term.
    await events.return?.();
    expect(again.leadership.signal.aborted).toBe(true);
    expect(provider.heldCount).toBe(0);
  });

  it('without recampaign, and after resign(), the iteration ends after the lost event', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const once = provider.createElection('once').events();
    const elected = await next(once);
    provider.loseLock(leadershipHandle(elected.leadership));
    expect((await next(once)).type).toBe('lost');
    expect((await once.next()).done).toBe(true);

    const resigning = provider.createElection('resign', { recampaign: true }).events();
    const term = (await next(resigning)).leadership;
    await term.resign();
    expect(await next(resigning)).toMatchObject({ type: 'lost', cause: 'resigned' });
    expect((await resigning.next()).done).toBe(true);
  });

  it('its signal withdraws a campaign or resigns a term, and the iteration ends quietly', async () => {
    const store = new MemoryLockStore();
    const provider = createMemoryLockProvider({ store });
    const stop = new AbortController();
    const events = provider.createElection('stop', { recampaign: true }).events({
      signal: stop.signal,
    });
    const term = (await next(events)).leadership;
    stop.abort();
    expect(await next(events)).toMatchObject({ type: 'lost', cause: 'resigned' });
    expect((await events.next()).done).toBe(true);
    expect(term.signal.aborted).toBe(true);

    // A campaign that waits behind another leader is withdrawn.
    const blocker = await provider.createElection('stop').campaign();
    const withdraw = new AbortController();
    const waiting = provider.createElection('stop').events({ signal: withdraw.signal });
    const pending = waiting.next();
    withdraw.abort();
    expect((await pending).done).toBe(true);
    await blocker.resign();
    expect(provider.heldCount).toBe(0);
  });

  it('its signal resigns the term while the loop body is still working on it', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const stop = new AbortController();
    const seen: string[] = [];
    const loop = (async () => {
      for await (const event of provider.createElection('busy').events({ signal: stop.signal })) {
        seen.push(event.type);
        if (event.type !== 'elected') continue;
        // The leader's work: runs until its term ends.
        await new Promise((resolve) =>
          event.leadership.signal.addEventListener('abort', resolve, { once: true }),
        );
        seen.push('work stopped');
      }
    })();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['elected']);
    stop.abort();
    await loop;
    expect(seen).toEqual(['elected', 'work stopped', 'lost']);
    expect(provider.heldCount).toBe(0);
  });

  it('provider close ends the iteration after the lost event', async () => {
    const provider = createMemoryLockProvider({ store: new MemoryLockStore() });
    const events = provider.createElection('closing', { recampaign: true }).events();
    await next(events);
    const closing = provider.close();
    expect(await next(events)).toMatchObject({ type: 'lost', cause: 'provider-closed' });
    expect((await events.next()).done).toBe(true);
    await closing;
  });
});

describe('election through withNamePrefix', () => {
  it('reports the caller’s name and isolates prefixes', async () => {
    const store = new MemoryLockStore();
    const tenantA = withNamePrefix(createMemoryLockProvider({ store }), 'a/');
    const tenantB = withNamePrefix(createMemoryLockProvider({ store }), 'b/');
    const a = tenantA.createElection('leader', { owner: 'a' });
    expect(a.name).toBe('leader');
    expect(a.owner).toBe('a');
    const termA = await a.campaign({ timeout: 0 });
    const termB = await tenantB.createElection('leader').campaign({ timeout: 0 });
    expect(a.current()).toBe(termA);
    expect(await tenantA.createElection('leader').leader()).toEqual({
      owner: 'a',
      epoch: termA.epoch,
    });
    await termA.resign();
    await termB.resign();
    await tenantA.close();
    await tenantB.close();
  });
});
