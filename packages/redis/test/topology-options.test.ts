import { InvalidArgumentError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { createRedisLockProvider } from '../src/index.js';

// Everything here is refused at construction: no server is involved (none listens on port 1).
describe('Cluster and Sentinel URLs, replica acknowledgement options', () => {
  it.each([
    ['redis+cluster://', /at least one seed node/],
    ['redis+cluster://a:1,b:99999', /"b:99999" is not host\[:port\]/],
    ['redis+cluster://a:1/2', /only database 0/],
    ['redis+cluster://a:1?leaseMs=5', /unknown query parameter "leaseMs"/],
    ['redis+sentinel://s1:1,s2:2', /must name the master/],
    ['redis+sentinel://s1:1/mymaster/x', /database after the master name must be a number/],
    ['redis+sentinel://s1:1/mymaster/0/extra', /must name the master/],
    ['redis+sentinel://s1:1/mymaster?role=slave', /unknown query parameter "role"/],
    ['redis+sentinel://s1:1/%E0%A4%A', /malformed percent-encoding/],
    ['redis+cluster://a:1#frag', /not a valid Redis Cluster or Sentinel URL/],
  ])('%s is an InvalidArgumentError', (nodes, message) => {
    const create = () => createRedisLockProvider({ nodes });
    expect(create).toThrow(InvalidArgumentError);
    expect(create).toThrow(message);
  });

  it('a password never appears in the error', () => {
    expect(() => createRedisLockProvider({ nodes: 'redis+cluster://u:secret@a:1/0' })).toThrow(
      /^nodes\[0\]: a Redis Cluster/,
    );
    expect(() => createRedisLockProvider({ nodes: 'redis+cluster://u:secret@a:1/0' })).not.toThrow(
      /secret/,
    );
  });

  it.each([
    [{ minReplicas: -1 }, /minReplicas must be an integer from 0 to 100/],
    [{ minReplicas: 1.5 }, /minReplicas/],
    [
      { minReplicas: 1, replicaTimeoutMs: 0 },
      /replicaTimeoutMs must be an integer from 1 to 10000/,
    ],
    [{ leaseMs: 1000, replicaTimeoutMs: 334 }, /replicaTimeoutMs/],
    [{ recordHolds: 'no' as unknown as boolean }, /recordHolds/],
  ])('%o is an InvalidArgumentError', (options, message) => {
    const create = () => createRedisLockProvider({ nodes: 'redis://127.0.0.1:1', ...options });
    expect(create).toThrow(InvalidArgumentError);
    expect(create).toThrow(message);
  });

  it('acknowledgement widens unavailableMs by replicaTimeoutMs per round; valid URLs construct without I/O', async () => {
    const plain = createRedisLockProvider({
      nodes: 'redis+sentinel://s1,s2:26380/main/2',
      commandTimeoutMs: 100,
    });
    const acked = createRedisLockProvider({
      nodes: 'redis+cluster://u:p@[::1]:7000,h2',
      commandTimeoutMs: 100,
      minReplicas: 2,
      replicaTimeoutMs: 50,
    });
    expect(plain.capabilities.unavailableMs).toBe(350);
    expect(acked.capabilities.unavailableMs).toBe(400);
    const sentinelOptions = plain.clients[0]?.options as {
      sentinels?: unknown;
      name?: string;
      db?: number;
    };
    expect(sentinelOptions.sentinels).toEqual([
      { host: 's1', port: 26379 },
      { host: 's2', port: 26380 },
    ]);
    expect([sentinelOptions.name, sentinelOptions.db]).toEqual(['main', 2]);
    expect((acked.clients[0] as { isCluster?: boolean }).isCluster).toBe(true);
    await Promise.all([plain.close(), acked.close()]);
  });
});
