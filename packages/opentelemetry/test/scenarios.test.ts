/**
 * The four stories the telemetry must tell right — a timeout, a loss, an abort, a handoff —
 * plus an acquire that fails with an error, each on the memory provider and on a real Redis
 * server, through the real OpenTelemetry SDK (in-memory span export, a collecting metric
 * reader). Each asserts the exact spans (names, attributes, links, status, events, parents)
 * and the exact metric points.
 */
import { randomUUID } from 'node:crypto';
import {
  BackendUnavailableError,
  createMemoryLockProvider,
  type ILockProvider,
  type LockHandle,
  LockLostError,
  LockTimeoutError,
  type MemoryLockProvider,
  MemoryLockStore,
} from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import { createRedisLockProvider, type RedisGrant, redisLockKeys } from '@lockkit/redis';
import { findFreePort } from '@lockkit/testkit';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { instrumentLocks, type LockInstrumentation } from '../src/index.js';
import {
  abortedWithin,
  hrMs,
  nextWait,
  scaled,
  shape,
  summary,
  type TestTelemetry,
  testTelemetry,
} from './support.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

interface Backend {
  readonly id: string;
  /** A provider as a user gets it; `leaseMs` where the backend has leases. */
  open(options?: { leaseMs?: number }): ILockProvider;
  /** Breaks a hold behind the holder's back, the way the real world would. */
  breakHold(provider: ILockProvider, handle: LockHandle): Promise<void>;
  /** Extension outcomes the loss shows before it (a lease backend finds the loss by extending). */
  readonly lossFoundByExtension: boolean;
}

const memory: Backend = {
  id: 'memory',
  open: () => createMemoryLockProvider({ store: new MemoryLockStore() }),
  breakHold: async (provider, handle) => (provider as MemoryLockProvider).loseLock(handle),
  lossFoundByExtension: false,
};

const redis: Backend = {
  id: 'redis',
  open: (options = {}) =>
    createRedisLockProvider({
      nodes: redisUrl(),
      ...(options.leaseMs && { leaseMs: options.leaseMs }),
    }),
  breakHold: async (_provider, handle) => {
    // Someone deletes the key with a plain client: the holder is not told.
    const { request } = grantBehind<RedisGrant>(handle);
    const client = new Redis(redisUrl(), { lazyConnect: true });
    try {
      await client.connect();
      expect(
        await client.del(redisLockKeys(request.namespace, request.kind, request.name).lock),
      ).toBe(1);
    } finally {
      client.disconnect();
    }
  },
  lossFoundByExtension: true,
};

function redisUrl(): string {
  const url = inject('lockkitServers').redisUrls[0];
  if (url === undefined) throw new Error('no Redis server from the global setup');
  return url;
}

const UNSET = SpanStatusCode.UNSET;
const ERROR = SpanStatusCode.ERROR;

describe.each([memory, redis])('on $id', (backend) => {
  let telemetry: TestTelemetry;
  let instrumentation: LockInstrumentation;
  const providers: ILockProvider[] = [];
  const open = (options?: { leaseMs?: number }): ILockProvider => {
    const provider = backend.open(options);
    providers.push(provider);
    return provider;
  };
  const start = (): void => {
    telemetry = testTelemetry();
    instrumentation = instrumentLocks({
      tracerProvider: telemetry.tracerProvider,
      meterProvider: telemetry.meterProvider,
      lockName: 'raw',
    });
  };
  afterEach(async () => {
    instrumentation.dispose();
    await Promise.all(providers.splice(0).map((provider) => provider.close()));
    await telemetry.shutdown();
  });

  const base = (name: string) => ({
    'lockkit.backend': backend.id,
    'lockkit.lock.primitive': 'mutex',
    'lockkit.lock.name': name,
  });
  const points = (...lines: string[]) =>
    lines.map((line) => line.replaceAll('BACKEND', backend.id));

  it('a timeout: the holder’s acquire and hold, the waiter’s acquire with outcome timeout and its wait inside', async () => {
    start();
    const name = `otel-timeout-${randomUUID()}`;
    const lock = open().createLock(name);
    const holder = await lock.acquire();
    const waited = nextWait(name);
    const failing = lock.acquire({ timeout: scaled(60) }).catch((error: unknown) => error);
    await waited;
    expect(LockTimeoutError.isInstance(await failing)).toBe(true);
    expect(await holder.release()).toBe(true);

    const spans = telemetry.spans();
    expect(spans.map(shape)).toEqual([
      {
        name: 'lock.acquire',
        attributes: { ...base(name), 'lockkit.lock.acquire.outcome': 'granted' },
        status: UNSET,
        events: [],
        links: [],
      },
      {
        name: 'lock.acquire',
        attributes: { ...base(name), 'lockkit.lock.acquire.outcome': 'timeout' },
        status: UNSET,
        events: ['lock.wait'],
        links: [],
      },
      {
        name: 'lock.hold',
        attributes: {
          ...base(name),
          'lockkit.lock.fencing_token': holder.fencingToken.toString(),
          'lockkit.lock.hold.outcome': 'released',
        },
        status: UNSET,
        events: [],
        links: [spans[0]?.spanContext().spanId],
      },
    ]);
    const timedOut = spans[1]!;
    expect(hrMs(timedOut.startTime, timedOut.endTime)).toBeGreaterThanOrEqual(scaled(60) - 1);
    expect(summary(await telemetry.points())).toEqual(
      points(
        'lockkit.lock.acquires {backend=BACKEND acquire.outcome=granted primitive=mutex} 1',
        'lockkit.lock.acquires {backend=BACKEND acquire.outcome=timeout primitive=mutex} 1',
        'lockkit.lock.held {backend=BACKEND primitive=mutex} 0',
        'lockkit.lock.hold.duration {backend=BACKEND hold.outcome=released primitive=mutex} count 1',
        'lockkit.lock.wait.duration {backend=BACKEND acquire.outcome=granted primitive=mutex} count 1',
        'lockkit.lock.wait.duration {backend=BACKEND acquire.outcome=timeout primitive=mutex} count 1',
      ),
    );
    const timeoutWait = (await telemetry.points()).find(
      (point) =>
        point.metric === 'lockkit.lock.wait.duration' &&
        point.attributes['lockkit.lock.acquire.outcome'] === 'timeout',
    );
    expect(timeoutWait?.sum).toBeGreaterThanOrEqual((scaled(60) - 1) / 1000);
  });

  it('a loss: the hold span ends with an error status, the reason and the exception; lost is counted', async () => {
    start();
    const name = `otel-loss-${randomUUID()}`;
    const provider = open({ leaseMs: Math.round(scaled(600)) });
    const handle = await provider.createLock(name).acquire();
    await backend.breakHold(provider, handle);
    const reason = await abortedWithin(handle.signal, 2000);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect(await handle.release()).toBe(false);

    const spans = telemetry.spans();
    expect(spans.map(shape)).toEqual([
      {
        name: 'lock.acquire',
        attributes: { ...base(name), 'lockkit.lock.acquire.outcome': 'granted' },
        status: UNSET,
        events: [],
        links: [],
      },
      {
        name: 'lock.hold',
        attributes: {
          ...base(name),
          'lockkit.lock.fencing_token': handle.fencingToken.toString(),
          'lockkit.lock.hold.outcome': 'lost',
          'lockkit.lock.lost.reason': 'revoked',
        },
        status: ERROR,
        events: backend.lossFoundByExtension ? ['lock.extend', 'exception'] : ['exception'],
        links: [spans[0]?.spanContext().spanId],
      },
    ]);
    const hold = spans[1]!;
    expect(hold.status.message).toBe((reason as Error).message);
    const exception = hold.events.find((event) => event.name === 'exception');
    expect(exception?.attributes?.['exception.type']).toBe('LOCK_LOST');
    if (backend.lossFoundByExtension) {
      expect(hold.events[0]?.attributes).toEqual({ 'lockkit.lock.extension.outcome': 'refused' });
    }
    expect(summary(await telemetry.points())).toEqual(
      points(
        'lockkit.lock.acquires {backend=BACKEND acquire.outcome=granted primitive=mutex} 1',
        ...(backend.lossFoundByExtension
          ? [
              'lockkit.lock.extensions {backend=BACKEND extension.outcome=refused primitive=mutex} 1',
            ]
          : []),
        'lockkit.lock.held {backend=BACKEND primitive=mutex} 0',
        'lockkit.lock.hold.duration {backend=BACKEND hold.outcome=lost primitive=mutex} count 1',
        'lockkit.lock.lost {backend=BACKEND lost.reason=revoked primitive=mutex} 1',
        'lockkit.lock.wait.duration {backend=BACKEND acquire.outcome=granted primitive=mutex} count 1',
      ),
    );
  });

  it('an abort: the waiter’s acquire ends with outcome aborted, not an error', async () => {
    start();
    const name = `otel-abort-${randomUUID()}`;
    const lock = open().createLock(name);
    const holder = await lock.acquire();
    const controller = new AbortController();
    const waited = nextWait(name);
    const aborted = lock.acquire({ signal: controller.signal }).catch((error: unknown) => error);
    await waited;
    const why = new Error('the user went away');
    controller.abort(why);
    expect(await aborted).toBe(why);
    expect(await holder.release()).toBe(true);

    const spans = telemetry.spans();
    expect(spans.map(shape)).toEqual([
      {
        name: 'lock.acquire',
        attributes: { ...base(name), 'lockkit.lock.acquire.outcome': 'granted' },
        status: UNSET,
        events: [],
        links: [],
      },
      {
        name: 'lock.acquire',
        attributes: { ...base(name), 'lockkit.lock.acquire.outcome': 'aborted' },
        status: UNSET,
        events: ['lock.wait'],
        links: [],
      },
      {
        name: 'lock.hold',
        attributes: {
          ...base(name),
          'lockkit.lock.fencing_token': holder.fencingToken.toString(),
          'lockkit.lock.hold.outcome': 'released',
        },
        status: UNSET,
        events: [],
        links: [spans[0]?.spanContext().spanId],
      },
    ]);
    expect(summary(await telemetry.points())).toEqual(
      points(
        'lockkit.lock.acquires {backend=BACKEND acquire.outcome=aborted primitive=mutex} 1',
        'lockkit.lock.acquires {backend=BACKEND acquire.outcome=granted primitive=mutex} 1',
        'lockkit.lock.held {backend=BACKEND primitive=mutex} 0',
        'lockkit.lock.hold.duration {backend=BACKEND hold.outcome=released primitive=mutex} count 1',
        'lockkit.lock.wait.duration {backend=BACKEND acquire.outcome=aborted primitive=mutex} count 1',
        'lockkit.lock.wait.duration {backend=BACKEND acquire.outcome=granted primitive=mutex} count 1',
      ),
    );
  });

  it('a handoff: two acquire spans and two hold spans, each under the caller’s span, each hold linked to its acquire', async () => {
    start();
    const name = `otel-handoff-${randomUUID()}`;
    const lock = open().createLock(name);
    const tracer = telemetry.tracerProvider.getTracer('test');
    const first = tracer.startSpan('request 1');
    const second = tracer.startSpan('request 2');
    const under = <T>(span: typeof first, fn: () => Promise<T>): Promise<T> =>
      context.with(trace.setSpan(context.active(), span), fn);
    const holder = await under(first, () => lock.acquire());
    const waited = nextWait(name);
    const waiting = under(second, () => lock.acquire());
    await waited;
    const heldOn = scaled(20);
    await new Promise((resolve) => setTimeout(resolve, heldOn));
    expect(await under(first, () => holder.release())).toBe(true);
    const waiter = await waiting;
    expect(await waiter.release()).toBe(true);
    first.end();
    second.end();

    const spans = telemetry.spans().filter((span) => span.name.startsWith('lock.'));
    expect(spans).toHaveLength(4);
    const find = (spanName: string, parent: typeof first) => {
      const found = spans.filter(
        (span) =>
          span.name === spanName && span.parentSpanContext?.spanId === parent.spanContext().spanId,
      );
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const holderAcquire = find('lock.acquire', first);
    const holderHold = find('lock.hold', first);
    const waiterAcquire = find('lock.acquire', second);
    const waiterHold = find('lock.hold', second);
    const granted = { ...base(name), 'lockkit.lock.acquire.outcome': 'granted' };
    expect(shape(holderAcquire)).toEqual({
      name: 'lock.acquire',
      attributes: granted,
      status: UNSET,
      events: [],
      links: [],
    });
    expect(shape(waiterAcquire)).toEqual({
      name: 'lock.acquire',
      attributes: granted,
      status: UNSET,
      events: ['lock.wait'],
      links: [],
    });
    for (const [hold, acquire, handle] of [
      [holderHold, holderAcquire, holder],
      [waiterHold, waiterAcquire, waiter],
    ] as const) {
      expect(shape(hold)).toEqual({
        name: 'lock.hold',
        attributes: {
          ...base(name),
          'lockkit.lock.fencing_token': handle.fencingToken.toString(),
          'lockkit.lock.hold.outcome': 'released',
        },
        status: UNSET,
        events: [],
        links: [acquire.spanContext().spanId],
      });
      expect(hold.spanContext().traceId).toBe(acquire.spanContext().traceId);
    }
    expect(waiter.fencingToken).toBeGreaterThan(holder.fencingToken);
    // The waiter's acquire covers its wait: it began before the holder let go and ended after.
    const waitEvent = waiterAcquire.events[0]!;
    expect(hrMs(waiterAcquire.startTime, waitEvent.time)).toBeGreaterThanOrEqual(0);
    expect(hrMs(waitEvent.time, waiterAcquire.endTime)).toBeGreaterThanOrEqual(heldOn - 1);
    expect(hrMs(holderHold.endTime, waiterAcquire.endTime)).toBeGreaterThan(-1);
    expect(hrMs(waiterAcquire.endTime, waiterHold.startTime)).toBe(0);
    expect(summary(await telemetry.points())).toEqual(
      points(
        'lockkit.lock.acquires {backend=BACKEND acquire.outcome=granted primitive=mutex} 2',
        'lockkit.lock.held {backend=BACKEND primitive=mutex} 0',
        'lockkit.lock.hold.duration {backend=BACKEND hold.outcome=released primitive=mutex} count 2',
        'lockkit.lock.wait.duration {backend=BACKEND acquire.outcome=granted primitive=mutex} count 2',
      ),
    );
  });
});

describe('on redis, an unreachable server', () => {
  it('an acquire that fails with an error: error status, error.type, the exception', async () => {
    const telemetry = testTelemetry();
    const instrumentation = instrumentLocks({
      tracerProvider: telemetry.tracerProvider,
      meterProvider: telemetry.meterProvider,
      lockName: 'omit',
    });
    const port = await findFreePort(); // nobody listens there: connections are refused
    const provider = createRedisLockProvider({ nodes: `redis://127.0.0.1:${port}` });
    try {
      const error = await provider
        .createLock('otel-error')
        .tryAcquire()
        .catch((caught: unknown) => caught);
      expect(BackendUnavailableError.isInstance(error)).toBe(true);
      const spans = telemetry.spans();
      expect(spans.map(shape)).toEqual([
        {
          name: 'lock.acquire',
          attributes: {
            'lockkit.backend': 'redis',
            'lockkit.lock.primitive': 'mutex',
            'lockkit.lock.acquire.outcome': 'error',
            'error.type': 'BACKEND_UNAVAILABLE',
          },
          status: ERROR,
          events: ['exception'],
          links: [],
        },
      ]);
      expect(spans[0]?.status.message).toBe((error as Error).message);
      expect(summary(await telemetry.points())).toEqual([
        'lockkit.lock.acquires {error.type=BACKEND_UNAVAILABLE backend=redis acquire.outcome=error primitive=mutex} 1',
        'lockkit.lock.wait.duration {error.type=BACKEND_UNAVAILABLE backend=redis acquire.outcome=error primitive=mutex} count 1',
      ]);
    } finally {
      instrumentation.dispose();
      await provider.close();
      await telemetry.shutdown();
    }
  });
});
