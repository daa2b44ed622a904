/**
 * Leases on a real Redis server of this file's own (it is paused): extensions that succeed,
 * and a lease that runs out while the server does not answer (reason `expired`).
 */
import { randomUUID } from 'node:crypto';
import { type ILockProvider, LockLostError } from '@lockkit/core';
import { createRedisLockProvider } from '@lockkit/redis';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { instrumentLocks, type LockInstrumentation } from '../src/index.js';
import {
  abortedWithin,
  scaled,
  shape,
  summary,
  type TestTelemetry,
  testTelemetry,
} from './support.js';

let server: ServerHandle;
beforeAll(async () => {
  [server] = (await startRedisServers(1, { useEnvironment: false })) as [ServerHandle];
});
afterAll(() => server?.stop());

let telemetry: TestTelemetry;
let instrumentation: LockInstrumentation;
let provider: ILockProvider;
/** Short, so the cases are quick; scaled (LOCKKIT_TIME_SCALE) so slow machines extend in time. */
const leaseMs = Math.round(scaled(300));
afterEach(async () => {
  instrumentation.dispose();
  await provider.close();
  await telemetry.shutdown();
});

function start(): void {
  telemetry = testTelemetry();
  instrumentation = instrumentLocks({
    tracerProvider: telemetry.tracerProvider,
    meterProvider: telemetry.meterProvider,
    lockName: 'omit',
  });
  provider = createRedisLockProvider({ nodes: server.url, leaseMs });
}

const base = { 'lockkit.backend': 'redis', 'lockkit.lock.primitive': 'mutex' };

describe('leases on Redis', () => {
  it('a hold past several extensions: each counted as extended, none on the span', async () => {
    start();
    const handle = await provider.createLock(`otel-extend-${randomUUID()}`).acquire();
    // Extensions start at a third of the lease and repeat every third: 2+ within 2.2 leases.
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 2.2));
    expect(await handle.release()).toBe(true);
    const lines = summary(await telemetry.points());
    const extended = lines.find((line) => line.startsWith('lockkit.lock.extensions '));
    expect(extended).toMatch(
      /^lockkit\.lock\.extensions \{backend=redis extension\.outcome=extended primitive=mutex\} \d+$/,
    );
    expect(Number(extended?.split(' ').at(-1))).toBeGreaterThanOrEqual(2);
    expect(lines.filter((line) => line.includes('extension'))).toHaveLength(1); // none failed
    const hold = telemetry.spans().find((span) => span.name === 'lock.hold');
    expect(hold?.events).toEqual([]);
    expect(hold?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a lease that runs out while the server is paused: reason expired, failed extensions on the span', async () => {
    start();
    const handle = await provider.createLock(`otel-expire-${randomUUID()}`).acquire();
    await server.pause();
    let reason: unknown;
    try {
      reason = await abortedWithin(handle.signal, 3 * leaseMs);
    } finally {
      await server.resume();
    }
    expect(LockLostError.isInstance(reason)).toBe(true);
    await handle.release();
    const [acquire, hold] = telemetry.spans();
    expect(shape(acquire!).attributes).toEqual({
      ...base,
      'lockkit.lock.acquire.outcome': 'granted',
    });
    const { events, ...rest } = shape(hold!);
    expect(rest).toEqual({
      name: 'lock.hold',
      attributes: {
        ...base,
        'lockkit.lock.fencing_token': handle.fencingToken.toString(),
        'lockkit.lock.hold.outcome': 'lost',
        'lockkit.lock.lost.reason': 'expired',
      },
      status: SpanStatusCode.ERROR,
      links: [acquire?.spanContext().spanId],
    });
    // One or more failed extensions (each times out), then the loss.
    expect(events.at(-1)).toBe('exception');
    expect(events.slice(0, -1).length).toBeGreaterThanOrEqual(1);
    expect(new Set(events.slice(0, -1))).toEqual(new Set(['lock.extend']));
    for (const event of hold!.events.slice(0, -1)) {
      expect(event.attributes).toEqual({
        'lockkit.lock.extension.outcome': 'failed',
        'error.type': 'BACKEND_UNAVAILABLE',
      });
    }
    const lines = summary(await telemetry.points());
    expect(lines).toContain(
      'lockkit.lock.lost {backend=redis lost.reason=expired primitive=mutex} 1',
    );
    expect(lines).toContain(
      'lockkit.lock.hold.duration {backend=redis hold.outcome=lost primitive=mutex} count 1',
    );
    expect(lines).toContain('lockkit.lock.held {backend=redis primitive=mutex} 0');
    expect(lines.find((line) => line.includes('extension.outcome=failed'))).toMatch(/ \d+$/);
  });
});
