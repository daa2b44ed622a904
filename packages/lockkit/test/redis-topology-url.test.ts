import { InvalidArgumentError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { parseLockUrl } from '../src/index.js';

describe('parseLockUrl: Redis Cluster and Sentinel URLs', () => {
  it.each([
    ['redis+cluster://a,b:7001', { nodes: 'redis+cluster://a:6379,b:7001' }],
    [
      'redis+cluster://u:p@a:7000/?leaseMs=5000&minReplicas=1&replicaTimeoutMs=100',
      { nodes: 'redis+cluster://u:p@a:7000', leaseMs: 5000, minReplicas: 1, replicaTimeoutMs: 100 },
    ],
    ['redis+sentinel://s1,s2:26380/main', { nodes: 'redis+sentinel://s1:26379,s2:26380/main' }],
    [
      'redis://h?recordHolds=false&owner=api-1',
      { nodes: 'redis://h:6379', recordHolds: false, owner: 'api-1' },
    ],
    [
      'REDIS+SENTINEL://:pw@s1/main/3?sentinelPassword=x&namespace=app',
      { nodes: 'redis+sentinel://:pw@s1:26379/main/3?sentinelPassword=x', namespace: 'app' },
    ],
  ])('%s', (url, providerOptions) => {
    const parsed = parseLockUrl(url);
    expect(parsed.backend).toBe('redis');
    expect(parsed.packages).toEqual(['@lockkit/redis', 'ioredis']);
    expect(parsed.providerOptions).toEqual(providerOptions);
  });

  it.each([
    ['redis+cluster://', /at least one host/],
    ['redis+cluster://a/0', /Cluster URL has no path/],
    ['redis+sentinel://s1:26379', /names the master/],
    ['redis+sentinel://s1/main/x', /names the master/],
    ['redis+cluster://a:99999', /is not host\[:port\]/],
    ['redis+cluster://a?minreplicas=1', /did you mean "minReplicas"/],
    ['redis+cluster://a?minReplicas=one', /must be a number/],
    ['redis+cluster://u:secret@a/0', /redis\+cluster:\/\/u:\*\*\*@a\/0/],
  ])('%s is an InvalidArgumentError', (url, message) => {
    expect(() => parseLockUrl(url)).toThrow(InvalidArgumentError);
    expect(() => parseLockUrl(url)).toThrow(message);
  });

  it('the URL owns nodes', () => {
    expect(() => parseLockUrl('redis+cluster://a', { nodes: ['x'] })).toThrow(
      /"nodes" cannot be combined/,
    );
  });
});
