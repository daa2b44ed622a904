import { inject } from 'vitest';
import {
  createEtcdLockProvider,
  type EtcdLockProvider,
  type EtcdLockProviderOptions,
} from '../src/index.js';

export { abortedWithin, waitFor as eventually } from '@lockkit/conformance';

/** The shared test server's URL (`etcd://127.0.0.1:PORT`), from the global setup. */
export function etcdUrl(): string {
  const url = inject('lockkitServers').etcdUrl;
  if (!url) throw new Error('the global setup started no etcd');
  return url;
}

/** `etcd://h1:p1,h2:p2` → `['h1:p1', 'h2:p2']`. */
export function hostsOf(url: string): string[] {
  return url.replace(/^etcd:\/\//, '').split(',');
}

/**
 * Test timings: 2 s leases (the servers allow 1 s), 2 s per request, a 200 ms safety poll.
 * Capabilities: lost within 3 s, a killed holder's lock free within 4 s, outages in 2.25 s.
 */
export const testTimings = {
  sessionTtlMs: 2000,
  commandTimeoutMs: 2000,
  pollIntervalMs: 200,
} as const;

/** A provider on `url` with the test timings (override anything with `extra`). */
export function testProvider(
  url: string,
  extra: Partial<EtcdLockProviderOptions> = {},
): EtcdLockProvider {
  return createEtcdLockProvider({ hosts: hostsOf(url), ...testTimings, ...extra });
}
