/**
 * instrumentLocks() itself, on the memory provider and the real OpenTelemetry SDK: options,
 * how names are shown, the attributes of each primitive, dispose(), the global providers,
 * and that nothing it does can break a lock call.
 */
import { hasSubscribers } from 'node:diagnostics_channel';
import {
  channelNames,
  createMemoryLockProvider,
  InvalidArgumentError,
  type MemoryLockProvider,
  MemoryLockStore,
} from '@lockkit/core';
import { type Grant, type LockBackend, LockProvider } from '@lockkit/core/backend';
import { type DiagLogger, DiagLogLevel, diag, metrics, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { instrumentLocks, type LockInstrumentation } from '../src/index.js';
import { shape, summary, type TestTelemetry, testTelemetry } from './support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(options: Parameters<typeof instrumentLocks>[0] = {}): {
  telemetry: TestTelemetry;
  instrumentation: LockInstrumentation;
  locks: MemoryLockProvider;
} {
  const telemetry = testTelemetry();
  const instrumentation = instrumentLocks({
    tracerProvider: telemetry.tracerProvider,
    meterProvider: telemetry.meterProvider,
    ...options,
  });
  const locks = createMemoryLockProvider({ store: new MemoryLockStore() });
  cleanups.push(
    () => telemetry.shutdown(),
    () => instrumentation.dispose(),
    () => locks.close(),
  );
  return { telemetry, instrumentation, locks };
}

/** Every listener this package adds is gone (nothing else in this file subscribes). */
function anyoneListening(): boolean {
  return Object.values(channelNames).some((name) => hasSubscribers(name));
}

describe('options', () => {
  it.each([
    [{ colour: 'blue' }, /Unknown instrumentLocks option "colour"/],
    [{ lockName: 'plain' }, /lockName must be 'raw', 'hash', 'omit' or a function, got "plain"/],
    [{ traces: 'yes' }, /traces must be true or false/],
    [{ metricsByName: 1 }, /metricsByName must be true or false/],
    [{ tracerProvider: {} }, /tracerProvider must be an object with a getTracer\(\) method/],
    [{ meterProvider: null }, /meterProvider must be an object with a getMeter\(\) method/],
  ])('%o is an InvalidArgumentError, and nothing is subscribed', (options, message) => {
    const error = (() => {
      try {
        instrumentLocks(options as never);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(anyoneListening()).toBe(false);
  });

  it('options must be an object', () => {
    expect(() => instrumentLocks(null as never)).toThrow(InvalidArgumentError);
  });
});

describe('lock names', () => {
  const nameOf = async (options: Parameters<typeof instrumentLocks>[0], name: string) => {
    const { telemetry, locks } = setup(options);
    await (await locks.createLock(name).acquire()).release();
    return telemetry.spans().map((span) => span.attributes['lockkit.lock.name']);
  };

  it('are hashed by default: sha256 and 16 hex digits, the same for the same name', async () => {
    const [first, second] = await nameOf({}, 'tenant-7/invoice-42');
    expect(first).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(second).toBe(first);
    const [other] = await nameOf({}, 'tenant-7/invoice-43');
    expect(other).not.toBe(first);
    // Names that differ only in a lone surrogate are different locks, so different hashes.
    const [high] = await nameOf({}, 'x\uD800');
    const [low] = await nameOf({}, 'x\uDC00');
    expect(high).not.toBe(low);
  });

  it("'raw' shows them, 'omit' leaves them out, a function maps them", async () => {
    expect(await nameOf({ lockName: 'raw' }, 'orders/42')).toEqual(['orders/42', 'orders/42']);
    expect(await nameOf({ lockName: 'omit' }, 'orders/42')).toEqual([undefined, undefined]);
    const family = (name: string): string | undefined =>
      name.startsWith('orders/') ? 'orders/*' : undefined;
    expect(await nameOf({ lockName: family }, 'orders/42')).toEqual(['orders/*', 'orders/*']);
    expect(await nameOf({ lockName: family }, 'users/1')).toEqual([undefined, undefined]);
  });

  it('are on metric points only with metricsByName', async () => {
    const plain = setup({ lockName: 'raw' });
    await (await plain.locks.createLock('a').acquire()).release();
    expect(summary(await plain.telemetry.points())).toContain(
      'lockkit.lock.acquires {backend=memory acquire.outcome=granted primitive=mutex} 1',
    );
    const named = setup({ lockName: 'raw', metricsByName: true });
    await (await named.locks.createLock('a').acquire()).release();
    expect(summary(await named.telemetry.points())).toEqual([
      'lockkit.lock.acquires {backend=memory acquire.outcome=granted name=a primitive=mutex} 1',
      'lockkit.lock.held {backend=memory name=a primitive=mutex} 0',
      'lockkit.lock.hold.duration {backend=memory hold.outcome=released name=a primitive=mutex} count 1',
      'lockkit.lock.wait.duration {backend=memory acquire.outcome=granted name=a primitive=mutex} count 1',
    ]);
  });
});

describe('primitives', () => {
  it('read-write locks carry their mode, semaphores their primitive', async () => {
    const { telemetry, locks } = setup({ lockName: 'omit' });
    const rw = locks.createReadWriteLock('report');
    await (await rw.acquireRead()).release();
    await (await rw.acquireWrite()).release();
    await (await locks.createSemaphore('exports', 3).acquire()).release();
    const holds = telemetry.spans().filter((span) => span.name === 'lock.hold');
    expect(holds.map((span) => span.attributes)).toEqual([
      {
        'lockkit.backend': 'memory',
        'lockkit.lock.primitive': 'read_write',
        'lockkit.lock.mode': 'read',
        'lockkit.lock.fencing_token': '1',
        'lockkit.lock.hold.outcome': 'released',
      },
      {
        'lockkit.backend': 'memory',
        'lockkit.lock.primitive': 'read_write',
        'lockkit.lock.mode': 'write',
        'lockkit.lock.fencing_token': '2',
        'lockkit.lock.hold.outcome': 'released',
      },
      {
        'lockkit.backend': 'memory',
        'lockkit.lock.primitive': 'semaphore',
        'lockkit.lock.fencing_token': '1',
        'lockkit.lock.hold.outcome': 'released',
      },
    ]);
    expect(summary(await telemetry.points()).filter((line) => line.includes('held'))).toEqual([
      'lockkit.lock.held {backend=memory mode=read primitive=read_write} 0',
      'lockkit.lock.held {backend=memory mode=write primitive=read_write} 0',
      'lockkit.lock.held {backend=memory primitive=semaphore} 0',
    ]);
  });

  it('held counts what is held right now', async () => {
    const { telemetry, locks } = setup();
    const first = await locks.createSemaphore('pool', 3).acquire();
    const second = await locks.createSemaphore('pool', 3).acquire();
    const held = async () =>
      summary(await telemetry.points()).filter((line) => line.startsWith('lockkit.lock.held '));
    expect(await held()).toEqual(['lockkit.lock.held {backend=memory primitive=semaphore} 2']);
    await first.release();
    expect(await held()).toEqual(['lockkit.lock.held {backend=memory primitive=semaphore} 1']);
    await second.release();
    expect(await held()).toEqual(['lockkit.lock.held {backend=memory primitive=semaphore} 0']);
  });
});

describe('dispose()', () => {
  it('stops all emission; a hold still open gets its span ended and leaves the held count', async () => {
    const { telemetry, instrumentation, locks } = setup({ lockName: 'omit' });
    const lock = locks.createLock('a');
    const open = await lock.acquire();
    expect(summary(await telemetry.points())).toEqual([
      'lockkit.lock.acquires {backend=memory acquire.outcome=granted primitive=mutex} 1',
      'lockkit.lock.held {backend=memory primitive=mutex} 1',
      'lockkit.lock.wait.duration {backend=memory acquire.outcome=granted primitive=mutex} count 1',
    ]);
    expect(instrumentation.active).toBe(true);
    instrumentation.dispose();
    instrumentation.dispose(); // idempotent
    expect(instrumentation.active).toBe(false);
    expect(anyoneListening()).toBe(false);
    expect(telemetry.spans().map(shape)).toEqual([
      {
        name: 'lock.acquire',
        attributes: {
          'lockkit.backend': 'memory',
          'lockkit.lock.primitive': 'mutex',
          'lockkit.lock.acquire.outcome': 'granted',
        },
        status: 0,
        events: [],
        links: [],
      },
      {
        name: 'lock.hold',
        attributes: {
          'lockkit.backend': 'memory',
          'lockkit.lock.primitive': 'mutex',
          'lockkit.lock.fencing_token': '1',
        },
        status: 0,
        events: [],
        links: [telemetry.spans()[0]?.spanContext().spanId],
      },
    ]);
    // Counts stay as they were; the hold still open at dispose() is no longer counted as held.
    const after = [
      'lockkit.lock.acquires {backend=memory acquire.outcome=granted primitive=mutex} 1',
      'lockkit.lock.held {backend=memory primitive=mutex} 0',
      'lockkit.lock.wait.duration {backend=memory acquire.outcome=granted primitive=mutex} count 1',
    ];
    expect(summary(await telemetry.points())).toEqual(after);
    await open.release();
    await (await lock.acquire()).release();
    expect(await lock.tryAcquire({ timeout: 0 }).then((handle) => handle?.release())).toBe(true);
    expect(telemetry.spans()).toHaveLength(2);
    expect(summary(await telemetry.points())).toEqual(after);
  });

  it('a new instrumentation on the same meter provider goes on counting where the last stopped', async () => {
    const { telemetry, instrumentation, locks } = setup();
    await (await locks.createLock('a').acquire()).release();
    instrumentation.dispose();
    const again = instrumentLocks({
      tracerProvider: telemetry.tracerProvider,
      meterProvider: telemetry.meterProvider,
    });
    cleanups.push(() => again.dispose());
    await (await locks.createLock('a').acquire()).release();
    expect(summary(await telemetry.points())).toEqual([
      'lockkit.lock.acquires {backend=memory acquire.outcome=granted primitive=mutex} 2',
      'lockkit.lock.held {backend=memory primitive=mutex} 0',
      'lockkit.lock.hold.duration {backend=memory hold.outcome=released primitive=mutex} count 2',
      'lockkit.lock.wait.duration {backend=memory acquire.outcome=granted primitive=mutex} count 2',
    ]);
  });

  it('works with `using`', async () => {
    const telemetry = testTelemetry();
    cleanups.push(() => telemetry.shutdown());
    {
      using _instrumentation = instrumentLocks({
        tracerProvider: telemetry.tracerProvider,
        meterProvider: telemetry.meterProvider,
      });
      expect(hasSubscribers(channelNames.acquire)).toBe(true);
    }
    expect(anyoneListening()).toBe(false);
  });
});

describe('defaults', () => {
  it('uses the global tracer and meter providers when none is given', async () => {
    const telemetry = testTelemetry();
    expect(trace.setGlobalTracerProvider(telemetry.tracerProvider)).toBe(true);
    expect(metrics.setGlobalMeterProvider(telemetry.meterProvider)).toBe(true);
    const instrumentation = instrumentLocks();
    const locks = createMemoryLockProvider({ store: new MemoryLockStore() });
    cleanups.push(
      () => telemetry.shutdown(),
      () => {
        trace.disable();
        metrics.disable();
      },
      () => instrumentation.dispose(),
      () => locks.close(),
    );
    await (await locks.createLock('a').acquire()).release();
    expect(telemetry.spans().map((span) => span.name)).toEqual(['lock.acquire', 'lock.hold']);
    expect(telemetry.spans()[0]?.instrumentationScope.name).toBe('@lockkit/opentelemetry');
    expect(await telemetry.points()).toHaveLength(4);
  });

  it('traces: false emits metrics only; metrics: false spans only', async () => {
    const metricsOnly = setup({ traces: false });
    await (await metricsOnly.locks.createLock('a').acquire()).release();
    expect(metricsOnly.telemetry.spans()).toEqual([]);
    expect(await metricsOnly.telemetry.points()).toHaveLength(4);
    const tracesOnly = setup({ metrics: false });
    await (await tracesOnly.locks.createLock('a').acquire()).release();
    expect(tracesOnly.telemetry.spans()).toHaveLength(2);
    expect(await tracesOnly.telemetry.points()).toEqual([]);
  });
});

describe('a loss published before its acquire', () => {
  it('a backend that reports the hold gone at once: the hold span ends lost, held goes back to 0', async () => {
    // A backend whose session is gone by the time core watches it: monitor() reports the loss
    // while core is still adopting the grant, before lockkit:acquire is published.
    let next = 1n;
    const backend: LockBackend<Grant> = {
      backend: 'instant-loss',
      capabilities: {
        crossProcess: false,
        handOver: false,
        leases: false,
        minLeaseMs: Number.POSITIVE_INFINITY,
        weightedPermits: false,
        fifo: true,
        lostDetectionMs: 0,
        abandonedReleaseMs: 0,
        unavailableMs: 0,
      },
      pollIntervalMs: 1000,
      tryAcquire: async () => ({ fencingToken: next++ }),
      release: async () => false,
      monitor: (_request, _grant, lose) => {
        lose('the session was gone at once');
        return () => {};
      },
      close: async () => {},
    };
    const telemetry = testTelemetry();
    const instrumentation = instrumentLocks({
      tracerProvider: telemetry.tracerProvider,
      meterProvider: telemetry.meterProvider,
      lockName: 'omit',
    });
    const provider = new LockProvider(backend);
    cleanups.push(
      () => telemetry.shutdown(),
      () => instrumentation.dispose(),
      () => provider.close(),
    );
    const handle = await provider.createLock('a').acquire();
    expect(handle.signal.aborted).toBe(true);
    expect(await handle.release()).toBe(false);
    expect(
      telemetry
        .spans()
        .map((span) => [span.name, span.attributes['lockkit.lock.hold.outcome'], span.status.code]),
    ).toEqual([
      ['lock.acquire', undefined, 0],
      ['lock.hold', 'lost', 2],
    ]);
    expect(summary(await telemetry.points())).toEqual([
      'lockkit.lock.acquires {backend=instant-loss acquire.outcome=granted primitive=mutex} 1',
      'lockkit.lock.held {backend=instant-loss primitive=mutex} 0',
      'lockkit.lock.hold.duration {backend=instant-loss hold.outcome=lost primitive=mutex} count 1',
      'lockkit.lock.lost {backend=instant-loss lost.reason=revoked primitive=mutex} 1',
      'lockkit.lock.wait.duration {backend=instant-loss acquire.outcome=granted primitive=mutex} count 1',
    ]);
  });
});

describe('failures inside the instrumentation', () => {
  it('a lockName function that throws: the lock works, the event is dropped and reported to diag', async () => {
    const reported: unknown[][] = [];
    const logger: DiagLogger = {
      error: (...args) => reported.push(args),
      warn: () => {},
      info: () => {},
      debug: () => {},
      verbose: () => {},
    };
    diag.setLogger(logger, DiagLogLevel.ERROR);
    cleanups.push(() => diag.disable());
    const boom = new Error('names are secret');
    const { telemetry, locks } = setup({
      lockName: () => {
        throw boom;
      },
    });
    const handle = await locks.createLock('a').acquire();
    expect(await handle.release()).toBe(true);
    expect(telemetry.spans()).toEqual([]);
    expect(reported).toEqual([['@lockkit/opentelemetry: lockkit:acquire event dropped', boom]]);
  });
});
