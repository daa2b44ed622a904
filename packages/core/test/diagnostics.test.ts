/**
 * The fields of the diagnostics_channel messages that subscribers (such as
 * @lockkit/opentelemetry) build spans and metrics from, on core's memory provider.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  channelNames,
  createMemoryLockProvider,
  type LockEvent,
  LockLostError,
  LockTimeoutError,
  MemoryLockStore,
} from '../src/index.js';

type Recorded = [channel: string, event: LockEvent];

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** Records every lockkit event, in order. */
function record(): Recorded[] {
  const events: Recorded[] = [];
  for (const name of Object.values(channelNames)) {
    const listener = (message: unknown): void => {
      events.push([name, message as LockEvent]);
    };
    subscribe(name, listener);
    stops.push(() => unsubscribe(name, listener));
  }
  return events;
}

/** Resolves at the next `lockkit:wait` event (subscribe before the acquire call). */
function nextWait(): Promise<void> {
  return new Promise((resolve) => {
    const listener = (): void => {
      unsubscribe(channelNames.wait, listener);
      resolve();
    };
    subscribe(channelNames.wait, listener);
  });
}

function provider() {
  return createMemoryLockProvider({ store: new MemoryLockStore() });
}

describe('diagnostics messages', () => {
  it('an uncontended hold: acquire and release carry the handle; acquire has waitedMs and no waitStartMs', async () => {
    const locks = provider();
    const events = record();
    const handle = await locks.createLock('a').acquire();
    await handle.release();
    expect(events.map(([name]) => name)).toEqual(['lockkit:acquire', 'lockkit:release']);
    const [acquire, release] = events.map(([, event]) => event);
    expect(acquire?.handle).toBe(handle);
    expect(release?.handle).toBe(handle);
    expect(acquire?.waitedMs).toBeGreaterThanOrEqual(0);
    expect(acquire).not.toHaveProperty('waitStartMs');
    expect(acquire?.fencingToken).toBe(handle.fencingToken);
    await locks.close();
  });

  it('a handoff: the waiter’s acquire says when its wait began, within waitedMs', async () => {
    const locks = provider();
    const lock = locks.createLock('a');
    const holder = await lock.acquire();
    const events = record();
    const waited = nextWait(); // (the memory backend queues the caller at once)
    const waiting = lock.acquire();
    await waited;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await holder.release();
    const handle = await waiting;
    const acquire = events.find(([name]) => name === 'lockkit:acquire')?.[1];
    expect(acquire?.handle).toBe(handle);
    expect(acquire?.waitStartMs).toBeGreaterThanOrEqual(0);
    expect(acquire?.waitedMs).toBeGreaterThanOrEqual(19);
    expect(acquire?.waitedMs).toBeGreaterThan(acquire?.waitStartMs ?? Number.POSITIVE_INFINITY);
    await handle.release();
    await locks.close();
  });

  it('a timeout, a caller abort and close() all carry waitedMs, and waitStartMs once waiting', async () => {
    const locks = provider();
    const lock = locks.createLock('a');
    const holder = await lock.acquire();
    const events = record();
    const timedOut = await lock.acquire({ timeout: 30 }).catch((error: unknown) => error);
    expect(LockTimeoutError.isInstance(timedOut)).toBe(true);
    const controller = new AbortController();
    const abortedWait = nextWait();
    const aborted = lock.acquire({ signal: controller.signal });
    await abortedWait;
    controller.abort(new Error('changed my mind'));
    await expect(aborted).rejects.toThrow('changed my mind');
    const closingWait = nextWait();
    const closing = lock.acquire();
    await closingWait;
    await locks.close(); // ends the wait with LockAbortedError (outcome 'aborted')
    await expect(closing).rejects.toThrow(/closed/);
    const failed = events.filter(([name]) => name === 'lockkit:acquire-failed').map(([, e]) => e);
    expect(failed.map((event) => event.outcome)).toEqual(['timeout', 'aborted', 'aborted']);
    for (const event of failed) {
      expect(event.waitedMs).toBeGreaterThanOrEqual(event.waitStartMs ?? 0);
      expect(event.waitStartMs).toBeGreaterThanOrEqual(0);
    }
    expect(failed[0]?.waitedMs).toBeGreaterThanOrEqual(29);
    expect(holder.signal.aborted).toBe(false);
  });

  it('a single try that finds the lock taken: timeout, waitedMs, no waitStartMs', async () => {
    const locks = provider();
    const lock = locks.createLock('a');
    const holder = await lock.acquire();
    const events = record();
    expect(await lock.tryAcquire()).toBeNull();
    const [[name, event] = []] = events;
    expect(name).toBe('lockkit:acquire-failed');
    expect(event).toMatchObject({ outcome: 'timeout' });
    expect(event?.waitedMs).toBeGreaterThanOrEqual(0);
    expect(event).not.toHaveProperty('waitStartMs');
    await holder.release();
    await locks.close();
  });

  it('a loss reported by the backend is `revoked`, with the handle and the LockLostError', async () => {
    const locks = provider();
    const handle = await locks.createSemaphore('s', 2).acquire();
    const events = record();
    locks.loseLock(handle);
    await handle.release();
    expect(events.map(([name]) => name)).toEqual(['lockkit:lost', 'lockkit:release']);
    const lost = events[0]?.[1];
    expect(lost?.reason).toBe('revoked');
    expect(lost?.handle).toBe(handle);
    expect(lost?.kind).toBe('semaphore');
    expect(LockLostError.isInstance(lost?.error)).toBe(true);
    expect(events[1]?.[1]).toMatchObject({ handle, stillHeld: false });
    await locks.close();
  });
});
