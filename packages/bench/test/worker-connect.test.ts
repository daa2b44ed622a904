import { createRedisLockProvider, type RedisLockProvider } from '@lockkit/redis';
import { type ServerHandle, startRedisServers } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectProvider } from '../src/chaos/worker-connect.js';

// Issue 24: a chaos worker reported ready with its Redis clients not yet connected (they
// connect lazily, on the first command, within the command timeout), so its first acquires
// could fail on every node while other workers' succeeded. connectProvider connects them
// before the worker reports ready.
let servers: ServerHandle[] = [];
let provider: RedisLockProvider | undefined;

beforeAll(async () => {
  servers = await startRedisServers(3, { useEnvironment: false });
});

afterAll(async () => {
  await provider?.close();
  await Promise.all(servers.map((server) => server.stop()));
});

describe('connectProvider', () => {
  it('connects every node of a Redlock provider before the first command', async () => {
    provider = createRedisLockProvider({ nodes: servers.map((server) => server.url) });
    expect(provider.clients.map((client) => client.status)).toEqual(['wait', 'wait', 'wait']);
    await connectProvider(provider, 10_000);
    expect(provider.clients.map((client) => client.status)).toEqual(['ready', 'ready', 'ready']);
  });

  it('leaves a provider without clients alone', async () => {
    await expect(connectProvider({}, 10)).resolves.toBeUndefined();
  });
});
