import { pathToFileURL } from 'node:url';
import { InvalidArgumentError, MemoryLockStore } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { parseLockUrl, redactUrl } from '../src/index.js';

describe('parseLockUrl: schemes → backend and factory options', () => {
  it.each([
    ['memory:', 'memory', {}],
    ['memory://', 'memory', {}],
    ['MEMORY:?namespace=app', 'memory', { namespace: 'app' }],
    ['file:///var/lock/app', 'file', { directory: '/var/lock/app' }],
    ['file://localhost/var/lock/app', 'file', { directory: '/var/lock/app' }],
    [
      'file:///tmp/with%20space?leaseMs=2000',
      'file',
      { directory: '/tmp/with space', leaseMs: 2000 },
    ],
    ['redis://cache', 'redis', { nodes: 'redis://cache:6379' }],
    ['rediss://user:pw@cache:6380/2', 'redis', { nodes: 'rediss://user:pw@cache:6380/2' }],
    [
      'redis://:pw@a:1,b:2,[::1]:3/4?leaseMs=9000&family=6',
      'redis',
      {
        nodes: [
          'redis://:pw@a:1/4?family=6',
          'redis://:pw@b:2/4?family=6',
          'redis://:pw@[::1]:3/4?family=6',
        ],
        leaseMs: 9000,
      },
    ],
    [
      'postgres://u:p@db:5432/app?sslmode=disable&namespace=billing',
      'postgres',
      { connection: 'postgres://u:p@db:5432/app?sslmode=disable', namespace: 'billing' },
    ],
    ['postgresql://db/app', 'postgres', { connection: 'postgresql://db/app' }],
    [
      'postgres://db/app?connectTimeoutMs=1500',
      'postgres',
      { connection: 'postgres://db/app', connectTimeoutMs: 1500 },
    ],
    [
      'mysql://root@db/app?connectTimeoutMs=2500',
      'mysql',
      { connection: 'mysql://root@db/app', connectTimeoutMs: 2500 },
    ],
    [
      'mysql://root@db/app?charset=utf8mb4',
      'mysql',
      { connection: 'mysql://root@db/app?charset=utf8mb4' },
    ],
    [
      'mariadb://root@db/app?fencing=sequence&maxReaders=8',
      'mysql',
      { connection: 'mysql://root@db/app', fencing: 'sequence', maxReaders: 8 },
    ],
    ['zookeeper://zk1,zk2:2182', 'zookeeper', { connectionString: 'zk1:2181,zk2:2182' }],
    [
      'zk://app:s%40cret@zk1:2181/chroot/locks?sessionTimeoutMs=4000&connectTimeoutMs=3000&assumePathExists=true',
      'zookeeper',
      {
        connectionString: 'zk1:2181/chroot/locks',
        auth: [{ scheme: 'digest', auth: 'app:s@cret' }],
        sessionTimeoutMs: 4000,
        connectTimeoutMs: 3000,
        assumePathExists: true,
      },
    ],
    ['etcd://e1,e2:2380', 'etcd', { hosts: ['e1:2379', 'e2:2380'] }],
    ['etcd://e1/', 'etcd', { hosts: ['e1:2379'] }],
    [
      'etcds://app:s%40cret@e1:2379/team%20a/locks?sessionTtlMs=4000&namespace=orders',
      'etcd',
      {
        hosts: ['https://e1:2379'],
        keyPrefix: '/team a/locks/',
        auth: { username: 'app', password: 's@cret' },
        sessionTtlMs: 4000,
        namespace: 'orders',
      },
    ],
  ])('%s', (url, backend, providerOptions) => {
    const resolved = parseLockUrl(url);
    expect(resolved.backend).toBe(backend);
    expect(resolved.providerOptions).toEqual(providerOptions);
  });

  it('names the packages to install for each backend', () => {
    expect(parseLockUrl('redis://h').packages).toEqual(['@lockkit/redis', 'ioredis']);
    expect(parseLockUrl('postgres://h/db').packages).toEqual(['@lockkit/postgres', 'pg']);
    expect(parseLockUrl('mysql://h/db').packages).toEqual(['@lockkit/mysql', 'mysql2']);
    expect(parseLockUrl('zk://h').packages).toEqual(['@lockkit/zookeeper']);
    expect(parseLockUrl('etcd://h').packages).toEqual(['@lockkit/etcd']);
    expect(parseLockUrl('file:///tmp/x').packages).toEqual(['@lockkit/file']);
    expect(parseLockUrl('memory:').packageName).toBe('@lockkit/core');
  });

  it('accepts a URL object, such as pathToFileURL(directory)', () => {
    const resolved = parseLockUrl(pathToFileURL('/srv/locks dir'));
    expect(resolved.providerOptions).toEqual({ directory: '/srv/locks dir' });
  });

  it('merges the options argument over query parameters', () => {
    const store = new MemoryLockStore();
    expect(parseLockUrl('memory:?namespace=a', { namespace: 'b', store }).providerOptions).toEqual({
      namespace: 'b',
      store,
    });
    expect(
      parseLockUrl('redis://h?leaseMs=1000', { leaseMs: 2000, autoExtend: false }).providerOptions,
    ).toEqual({ nodes: 'redis://h:6379', leaseMs: 2000, autoExtend: false });
  });

  it('types query parameters by the option they set', () => {
    const options = parseLockUrl(
      'file:///x?namespace=123&autoExtend=false&pollIntervalMs=12.5&io=async',
    ).providerOptions;
    expect(options).toEqual({
      directory: '/x',
      namespace: '123',
      autoExtend: false,
      pollIntervalMs: 12.5,
      io: 'async',
    });
  });
});

describe('parseLockUrl: what it refuses (InvalidArgumentError, before any import)', () => {
  it.each([
    ['', /no scheme/],
    ['localhost:6379', /Unknown lock URL scheme "localhost:"/],
    ['memory', /no scheme/],
    ['consul://h:8500', /Unknown lock URL scheme "consul:".*redis:.*zk:.*etcd:/],
    ['memory:store-1', /memory URL has no host or path/],
    ['file:locks', /absolute directory/],
    ['file:/var/lock', /absolute directory/],
    ['file://nas/share/locks', /not host "nas"/],
    ['file:///x#top', /no #fragment/],
    ['file:///x?leaseMs=soon', /"leaseMs" must be a number/],
    ['file:///x?autoExtend=maybe', /"autoExtend" must be true or false/],
    ['file:///x?stale=5000', /Unknown query parameter "stale".*leaseMs/],
    ['memory:?leaseMs=1', /Unknown query parameter "leaseMs"/],
    ['redis://', /at least one host/],
    ['redis://a:1,,b:2', /Host "" .* is not host\[:port\]/],
    ['redis://h:0', /is not host\[:port\]/],
    ['redis://h?LeaseMs=1', /did you mean "leaseMs"/],
    ['redis://h?leaseMs=1&leaseMs=2', /given twice/],
    ['postgres://h/db?namespace=%E0%A4%A', /Malformed percent-encoding/],
    ['zookeeper://', /at least one host/],
    ['zookeeper://h?chroot=/x', /Unknown query parameter "chroot"/],
    ['etcd://', /at least one host/],
    ['etcd://h?keyPrefix=/x/', /Unknown query parameter "keyPrefix"/],
    ['etcd://user@h', /needs a password/],
  ])('%j', (url, message) => {
    const attempt = () => parseLockUrl(url);
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(message);
  });

  it('rejects options the URL already gives, and a non-string URL', () => {
    expect(() => parseLockUrl('file:///x', { directory: '/y' })).toThrow(
      /"directory" cannot be combined/,
    );
    expect(() => parseLockUrl('redis://h', { nodes: ['redis://a'] })).toThrow(/"nodes"/);
    expect(() => parseLockUrl('postgres://h/d', { pool: {} })).toThrow(
      /createPostgresLockProvider/,
    );
    expect(() => parseLockUrl('zk://h', { client: {} })).toThrow(InvalidArgumentError);
    expect(() => parseLockUrl('etcd://h', { hosts: ['a:1'] })).toThrow(/createEtcdLockProvider/);
    expect(() => parseLockUrl('memory:', { leaseMs: 5 })).toThrow(
      /memory takes: namespace, owner, store/,
    );
    expect(() => parseLockUrl(42 as unknown as string)).toThrow(InvalidArgumentError);
  });

  it('never shows a password in a message', () => {
    expect(() => parseLockUrl('redis://user:hunter2@h?LeaseMs=1')).toThrow(
      'redis://user:***@h?LeaseMs=1',
    );
    try {
      parseLockUrl('postgres://app:hunter2@db/x#frag');
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });
});

describe('redactUrl', () => {
  it.each([
    ['redis://:pw@h1:1,h2:2/0', 'redis://:***@h1:1,h2:2/0'],
    ['postgres://app:p%40ss@db/app?x=1', 'postgres://app:***@db/app?x=1'],
    ['mysql://root@db/app', 'mysql://root@db/app'],
    ['file:///tmp/x', 'file:///tmp/x'],
    ['zk://a:b@c:d@zk1', 'zk://a:***@zk1'],
  ])('%s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
