import { InvalidArgumentError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { createEtcdLockProvider, type EtcdLockProviderOptions } from '../src/index.js';
import { etcdUrl, hostsOf, testTimings } from './support.js';

const hosts = hostsOf(etcdUrl());

describe('provider options', () => {
  it.each<[string, unknown]>([
    ['neither hosts nor client', {}],
    ['both hosts and client', { hosts, client: {} }],
    ['a host without a port', { hosts: 'localhost' }],
    ['an empty host list', { hosts: [] }],
    ['a host with a path', { hosts: 'http://a:2379/x' }],
    ['a non-string host', { hosts: [2379] }],
    ['a null client', { client: null }],
    ['a client that is not an etcd3 client', { client: { put: () => {} } }],
    ['a TTL of fractional seconds', { hosts, sessionTtlMs: 1500 }],
    ['a TTL under a second', { hosts, sessionTtlMs: 500 }],
    ['a negative command timeout', { hosts, commandTimeoutMs: -1 }],
    ['a NaN poll interval', { hosts, pollIntervalMs: Number.NaN }],
    ['a key prefix without a trailing slash', { hosts, keyPrefix: '/locks' }],
    ['auth without a username', { hosts, auth: { username: '', password: 'x' } }],
    ['tls without a root certificate', { hosts, tls: { rootCertificate: 'pem' } }],
    [
      'auth with an injected client',
      { client: { lease: () => {} }, auth: { username: 'u', password: 'p' } },
    ],
    ['an unknown option', { hosts, sessionTtl: 1000 }],
  ])('rejects %s with InvalidArgumentError, before any I/O', (_label, options) => {
    expect(() => createEtcdLockProvider(options as EtcdLockProviderOptions)).toThrow(
      InvalidArgumentError,
    );
  });

  it('declares its bounds from the options', () => {
    const provider = createEtcdLockProvider({ hosts, ...testTimings });
    expect(provider.capabilities).toEqual({
      crossProcess: true,
      handOver: true,
      leases: false,
      minLeaseMs: Number.POSITIVE_INFINITY,
      weightedPermits: true,
      fifo: true,
      inspection: true,
      lostDetectionMs: 3000,
      abandonedReleaseMs: 4000,
      unavailableMs: 2250,
    });
  });

  it('works under another key prefix and with http:// hosts; the prefix keeps apart what it should', async () => {
    const prefixed = createEtcdLockProvider({
      hosts: hosts.map((host) => `http://${host}`),
      keyPrefix: '/other-app/locks/',
      ...testTimings,
    });
    const plain = createEtcdLockProvider({ hosts, ...testTimings });
    try {
      const held = await prefixed.createLock('prefix').acquire();
      expect(prefixed.keyOf(held).startsWith('/other-app/locks/mutex.prefix.')).toBe(true);
      // Another prefix is another set of locks.
      const elsewhere = await plain.createLock('prefix').tryAcquire();
      expect(elsewhere).not.toBeNull();
      await elsewhere!.release();
      await held.release();
    } finally {
      await Promise.all([prefixed.close(), plain.close()]);
    }
  });

  it('uses an injected etcd3 client and leaves it open', async () => {
    const { Etcd3 } = await import('etcd3');
    const client = new Etcd3({ hosts });
    const provider = createEtcdLockProvider({ client, ...testTimings });
    try {
      const handle = await provider.createLock('injected').acquire();
      expect(await handle.release()).toBe(true);
      await provider.close();
      await client.put('/still-open').value('yes');
      expect(await client.get('/still-open').string()).toBe('yes');
    } finally {
      client.close();
    }
  });
});
